/** The first `sh` block after the README paragraph that starts with `lead`: a command as a user copies it. */
export function readmeCommand(readme: string, lead: string): string {
  const at = readme.indexOf(`\n${lead}`);
  if (at < 0) throw new Error(`README has no paragraph starting "${lead}"`);
  const block = /```sh\n([^`]+?)\n```/.exec(readme.slice(at));
  if (!block) throw new Error(`README has no sh block after "${lead}"`);
  return block[1]!.trim();
}

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
