// A Markdown renderer for the project's own guides (docs/*.md), served by the gateway at
// /docs/guide: the subset they are written in — headings, paragraphs, lists, fenced code, tables,
// inline code, links, bold and italics. Everything from the file is escaped; only the renderer
// writes markup. Not a general Markdown implementation (the guides are ours, and tests render each).
import { escape } from '../web/html.ts';

export type Rendered = { title: string; html: string };

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** Inline Markdown to HTML. `link` maps a link target to an href, or null to show its text alone. */
function inline(text: string, link: (href: string) => string | null): string {
  const held: string[] = [];
  const hold = (markup: string) => `\u0000${held.push(markup) - 1}\u0000`;
  // Code spans first (nothing inside them is Markdown), then links (their text is inline Markdown).
  // A code span may run over a line end, which it shows as a space (as GitHub does).
  let out = text.replace(/(`+)([\s\S]+?)\1/g, (_m, _ticks: string, code: string) => hold(`<code>${escape(code.replace(/\n/g, ' ').trim() || code)}</code>`));
  out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, target: string) => {
    const href = link(target);
    const inner = inline(label.replace(/\u0000(\d+)\u0000/g, (_x, i: string) => `\u0001${i}\u0001`), link).replace(/\u0001(\d+)\u0001/g, (_x, i: string) => held[Number(i)]!);
    return hold(href === null ? inner : `<a href="${escape(href)}">${inner}</a>`);
  });
  out = escape(out)
    .replace(/\*\*([\s\S]+?)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?![\w*])/g, '$1<em>$2</em>');
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => held[Number(i)]!);
}

/** The cells of a table row; `|` inside code spans or escaped as `\|` stays in its cell. */
function cells(row: string): string[] {
  const body = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  const out: string[] = [];
  let cell = '';
  let inCode = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && body[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '`') {
      inCode = !inCode;
      cell += c;
    } else if (c === '|' && !inCode) {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  out.push(cell.trim());
  return out;
}

const LIST_ITEM = /^(\s*)([-*]|\d+\.)\s+(.*)$/;
const FENCE = /^\s*```/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** Renders a guide: its first `#` heading is the title. */
export function renderMarkdown(markdown: string, link: (href: string) => string | null): Rendered {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let title = '';
  let tables = 0;
  let i = 0;
  const startsBlock = (line: string, next: string | undefined) =>
    /^#{1,6}\s/.test(line) || FENCE.test(line) || LIST_ITEM.test(line) || (line.trim().startsWith('|') && next !== undefined && TABLE_RULE.test(next));
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const text = heading[2]!;
      if (level === 1 && !title) title = text.replace(/`/g, '');
      out.push(`<h${level} id="${escape(slug(text.replace(/`/g, '')))}">${inline(text, link)}</h${level}>`);
      i++;
      continue;
    }
    if (FENCE.test(line)) {
      const lang = line.trim().slice(3).trim();
      const code: string[] = [];
      i++;
      while (i < lines.length && !FENCE.test(lines[i]!)) code.push(lines[i++]!);
      i++; // the closing fence
      // Focusable: a block wider than the page scrolls, and the keyboard must reach it.
      out.push(`<pre tabindex="0"${lang ? ` data-lang="${escape(lang)}"` : ''}><code>${escape(code.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.trim().startsWith('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]!)) {
      const head = cells(line);
      const align = cells(lines[i + 1]!).map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : null));
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.trim().startsWith('|')) rows.push(cells(lines[i++]!));
      const td = (tag: 'th' | 'td', c: string, n: number) => `<${tag}${align[n] ? ` style="text-align:${align[n]}"` : ''}${tag === 'th' ? ' scope="col"' : ''}>${inline(c, link)}</${tag}>`;
      tables++;
      out.push(
        `<div class="table-wrap" tabindex="0" role="region" aria-label="Table ${tables}"><table><thead><tr>${head.map((c, n) => td('th', c, n)).join('')}</tr></thead><tbody>${rows
          .map((r) => `<tr>${head.map((_h, n) => td('td', r[n] ?? '', n)).join('')}</tr>`)
          .join('')}</tbody></table></div>`,
      );
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]!);
      const items: string[] = [];
      while (i < lines.length) {
        const m = LIST_ITEM.exec(lines[i]!);
        if (m && /\d/.test(m[2]!) === ordered && m[1]!.length === item[1]!.length) {
          items.push(m[3]!);
          i++;
        } else if (lines[i]!.trim() && /^\s+/.test(lines[i]!) && !FENCE.test(lines[i]!)) {
          items[items.length - 1] += ` ${lines[i++]!.trim()}`; // a continuation line of the item
        } else if (!lines[i]!.trim() && i + 1 < lines.length && LIST_ITEM.exec(lines[i + 1]!)?.[1] === item[1]) {
          i++; // a blank line between items: the same list
        } else break;
      }
      const start = ordered && item[2] !== '1.' ? ` start="${parseInt(item[2]!, 10)}"` : '';
      const tag = ordered ? 'ol' : 'ul';
      out.push(`<${tag}${start}>${items.map((t) => `<li>${inline(t, link)}</li>`).join('')}</${tag}>`);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() && !(para.length && startsBlock(lines[i]!, lines[i + 1]))) para.push(lines[i++]!.trim());
    out.push(`<p>${inline(para.join('\n'), link)}</p>`);
  }
  return { title, html: out.join('\n') };
}
