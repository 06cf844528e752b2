/**
 * The links of Markdown documents, checked against a set of files: what a reader of the package
 * on the registry (or in node_modules) can follow. A link is fine when it is absolute (`https:`,
 * `mailto:`), a fragment of the same page (`#usage`), or a relative path that resolves to one of
 * the files (its fragment ignored); anything else is reported as `doc:line: target`.
 */
import path from 'node:path';

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;
/** `[text](target)` and `![alt](target "title")`. */
const INLINE = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
/** `[label]: target` reference definitions. */
const REFERENCE = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/;

/** Each link target of `markdown` with its 1-based line, code blocks and code spans left out. */
export function markdownLinks(markdown: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(text);
    if (opener) {
      if (fence === undefined) fence = opener[1]![0];
      else if (opener[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const prose = text.replace(/`[^`]*`/g, '');
    const reference = REFERENCE.exec(prose);
    if (reference) links.push({ line: index + 1, target: reference[1]! });
    for (const match of prose.matchAll(INLINE)) links.push({ line: index + 1, target: match[1]! });
  });
  return links;
}

/**
 * The links of `documents` (package-relative path → text) that lead nowhere inside `files`
 * (package-relative paths, `/`-separated) and are not absolute.
 */
export function unresolvedLinks(documents: Record<string, string>, files: ReadonlySet<string>): string[] {
  const broken: string[] = [];
  for (const [document, markdown] of Object.entries(documents)) {
    for (const { line, target } of markdownLinks(markdown)) {
      if (ABSOLUTE.test(target) || target.startsWith('#')) continue;
      const relative = decodeURIComponent(target.replace(/[?#].*$/, ''));
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(document), relative));
      if (resolved.startsWith('../') || !files.has(resolved.replace(/\/$/, ''))) {
        broken.push(`${document}:${line}: ${target}`);
      }
    }
  }
  return broken;
}
