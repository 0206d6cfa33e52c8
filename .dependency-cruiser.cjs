// The server's layers, lowest first: a file may import from its own layer and the ones below,
// never from one above, and nothing in server/ may import in a circle. `npm run check` runs this
// (docs/architecture.md draws it). A folder belongs to one layer; a new folder gets a line here.
const layers = [
  ['contract', ['^contract/']],
  ['base', ['^server/runtime/', '^server/config/', '^server/observe/']],
  ['stores', ['^server/db/', '^server/stores/', '^server/auth/', '^server/blobs/']],
  ['upstream', ['^server/upstream/']],
  ['formats', ['^server/translate/', '^server/media/', '^server/speech/', '^server/transcription/']],
  ['providers', ['^server/providers/', '^server/search/']],
  ['domain', ['^server/routing/', '^server/requests/', '^server/billing/', '^server/jobs/', '^server/catalog/', '^server/client-formats/', '^server/accounts/', '^server/oauth/', '^server/boot/']],
  ['pipeline', ['^server/pipeline/']],
  ['capabilities', ['^server/capabilities/']],
  ['http', ['^server/http/', '^server/web/']],
  ['app', ['^server/[^/]+\\.ts$']],
];

const upward = layers.slice(0, -1).map(([name, paths], i) => ({
  name: `no-import-up-from-${name}`,
  comment: `${name} sits below ${layers.slice(i + 1).map(([n]) => n).join(', ')}: it may not import from them`,
  severity: 'error',
  from: { path: paths },
  to: { path: layers.slice(i + 1).flatMap(([, p]) => p) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'capabilities-through-the-pipeline',
      comment: 'holds, routing and failover are stages of the request pipeline: a capability asks server/pipeline/, never billing/ or routing/ (docs/architecture.md "The request pipeline")',
      severity: 'error',
      from: { path: '^server/capabilities/' },
      to: { path: ['^server/billing/', '^server/routing/'] },
    },
    {
      name: 'no-circular',
      comment: 'a circle of imports makes its files one unit: break it by moving the shared part down',
      severity: 'error',
      from: { path: '^(server|contract)/' },
      to: { circular: true },
    },
    {
      name: 'every-server-file-has-a-layer',
      comment: 'a folder of server/ that no layer lists: add it to the layers above',
      severity: 'error',
      from: { path: '^server/', pathNot: layers.flatMap(([, p]) => p) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The generated Prisma client is vendored code with circles of its own.
    exclude: { path: ['(^|/)node_modules/', '^server/db/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.mjs', '.js'] },
  },
};
