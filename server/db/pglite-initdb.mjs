// Creates a fresh embedded database directory, run as a short-lived child process.
// initdb inside PGlite leaves ~500 MB of WebAssembly and file-system bundle memory behind that
// the process never returns to the OS; doing it here keeps the serving process small.
// Plain JavaScript so it starts without the TypeScript loader.
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: pglite-initdb.mjs <data directory>\n');
  process.exit(2);
}
const lite = await PGlite.create(dir);
await lite.close();
