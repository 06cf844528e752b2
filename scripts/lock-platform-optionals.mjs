#!/usr/bin/env node
// Keeps package-lock.json valid for `npm ci` when it was written against a registry mirror that
// only serves this platform's binaries (404 for e.g. @swc/core-darwin-arm64): npm then leaves the
// other platforms' optional packages out of the lock, and `npm ci` rejects the lock as out of sync
// ("Missing: @swc/core-darwin-arm64@ from lock file"). This adds those entries back, with the
// os/cpu that their names state, so npm skips them on other platforms without fetching anything.
// Run after `npm install` changes the lock: `node scripts/lock-platform-optionals.mjs`.
import fs from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const packages = lock.packages;

const OS = [
  'darwin',
  'linux',
  'win32',
  'freebsd',
  'android',
  'openharmony',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
];
const CPU = {
  x64: 'x64',
  ia32: 'ia32',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  mips64el: 'mips64el',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  if (!os || !cpu) return undefined;
  const libc =
    os === 'linux'
      ? parts.some((p) => p.startsWith('musl'))
        ? 'musl'
        : parts.some((p) => p.startsWith('gnu'))
          ? 'glibc'
          : undefined
      : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [key, entry] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    // Where npm would place it: next to the parent's own node_modules, else hoisted to the top.
    const nested = `${key}/node_modules/${dep}`;
    if (packages[nested] || packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) continue; // only exact-pinned platform binaries
    packages[`node_modules/${dep}`] = {
      version: spec,
      ...platform,
      ...(entry.dev ? { dev: true } : {}),
      ...(entry.devOptional ? { devOptional: true } : {}),
      optional: true,
    };
    added++;
  }
}

lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`lock-platform-optionals: added ${added} entr${added === 1 ? 'y' : 'ies'}`);
