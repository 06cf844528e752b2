import fs from 'node:fs/promises';

/**
 * Who listens on a TCP port of this host, for a start-up error that must say more than "in use":
 * `process 4242 (node dist/app/main.js)`. Linux only (/proc); elsewhere, or for another user's
 * process, undefined, and the error says what it can without it.
 */
export async function portHolder(port: number): Promise<string | undefined> {
  try {
    const inodes = new Set<string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      const text = await fs.readFile(table, 'utf8').catch(() => '');
      for (const line of text.split('\n').slice(1)) {
        const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
        // State 0A is LISTEN; the local address ends in the port, in hex.
        if (state === '0A' && local && parseInt(local.split(':')[1] ?? '', 16) === port && inode)
          inodes.add(inode);
      }
    }
    if (inodes.size === 0) return undefined;
    for (const pid of await fs.readdir('/proc')) {
      if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
      const fds = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      for (const fd of fds) {
        const link = await fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
        const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        if (inode && inodes.has(inode)) {
          const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
          // The program and its first argument only: later ones may carry secrets.
          const command = cmdline.split('\0').filter(Boolean).slice(0, 2).join(' ').slice(0, 120);
          return `process ${pid}${command ? ` (${command})` : ''}`;
        }
      }
    }
  } catch {
    // Best effort: the error is still thrown, without its holder.
  }
  return undefined;
}
