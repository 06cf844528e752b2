/** The README's install lines, by their `# Nest N, Platform` comment: package name → version range ('' when none). */
export function readmeInstallLines(readme: string): Record<string, Record<string, string>> {
  const lines: Record<string, Record<string, string>> = {};
  for (const [, title, command] of readme.matchAll(/```sh\n# (Nest \d+, \w+)\n(npm i [^\n]+)\n```/g)) {
    const packages: Record<string, string> = {};
    for (const word of command!.split(/\s+/).slice(2)) {
      const at = word.lastIndexOf('@');
      if (at > 0) packages[word.slice(0, at)] = word.slice(at + 1);
      else packages[word] = '';
    }
    lines[title!] = packages;
  }
  return lines;
}

/** A shell block of a document: where it is, and its text as a user copies it. */
export interface ShellBlock {
  document: string;
  /** 1-based line of its first command line. */
  line: number;
  code: string;
  /** Its first line: how a test names it (stable when lines above it move). */
  first: string;
}

/** Every ```sh / ```bash / ```shell block of a markdown text. */
export function shellBlocks(document: string, text: string): ShellBlock[] {
  const lines = text.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    if (end < 0) throw new Error(`${document}:${i + 1}: unclosed code block`);
    if (['sh', 'bash', 'shell'].includes(fence[1]!)) {
      const code = lines.slice(i + 1, end).join('\n');
      blocks.push({ document, line: i + 2, code, first: code.split('\n')[0]!.trim() });
    }
    i = end;
  }
  return blocks;
}

/** A ```text block that shows a terminal: `$ command` lines, each followed by what it printed. */
export interface Transcript {
  document: string;
  /** 1-based line of its first command. */
  line: number;
  /** Its first command, without the `$ `: how a test names it. */
  first: string;
  steps: Array<{ command: string; shown: string[] }>;
}

/** Every ```text block of a markdown text whose first line is a `$ ` command. */
export function transcripts(document: string, text: string): Transcript[] {
  const lines = text.split('\n');
  const found: Transcript[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    if (end < 0) throw new Error(`${document}:${i + 1}: unclosed code block`);
    if (fence[1] === 'text' && lines[i + 1]?.startsWith('$ ')) {
      const steps: Transcript['steps'] = [];
      for (const l of lines.slice(i + 1, end)) {
        if (l.startsWith('$ ')) steps.push({ command: l.slice(2), shown: [] });
        else steps.at(-1)!.shown.push(l);
      }
      found.push({ document, line: i + 2, first: steps[0]!.command, steps });
    }
    i = end;
  }
  return found;
}
