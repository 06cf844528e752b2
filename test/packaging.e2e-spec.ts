/**
 * The package as users get it: `npm pack` (which runs `prepack` → the real build), then the
 * tarball installed from disk into two apps outside this repo — a Nest 12 ESM app run with node,
 * and a Nest 11 CommonJS app whose own tests run Jest in CommonJS mode (ts-jest). Each sends an SMS
 * through `nestjs-hubtel/sms` to a fake SMS API here, and this test checks what the fake received.
 *
 * The pack runs in a temporary copy of the repo (its node_modules linked), so the test neither
 * rewrites this checkout's dist/ nor races another build of it. Fixture dependencies come from the
 * npm registry and are cached between runs (keyed on the fixture's package.json) OUTSIDE the
 * repo, so nothing can quietly resolve from this repo's node_modules. The tarball itself is always
 * the one packed by this run; the test compares the installed files with that build to be sure.
 *
 * The Nest 12 app also runs the package's bins as npm linked them (node_modules/.bin, through their
 * shebang): each one's --help, and a hubtel-sandbox on a free port that answers and stops on
 * SIGTERM. The Nest 11 app's Jest suite also uses `nestjs-hubtel/testing` as docs/testing.md shows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { namedImportsOf } from './support/esm-named-imports.js';
import { unresolvedLinks } from './support/markdown-links.js';
import { readmeInstallLines } from './support/readme.js';

const repoRoot = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const fixturesDir = path.join(repoRoot, 'test', 'fixtures');
const cacheRoot = process.env.HUBTEL_FIXTURE_CACHE ?? path.join(os.tmpdir(), 'nestjs-hubtel-fixtures');
const MINUTE = 60_000;
/** Every entry point, with the libs/<area> it is built from. */
const ENTRIES = [
  ['nestjs-hubtel', 'core'],
  ['nestjs-hubtel/sms', 'sms'],
  ['nestjs-hubtel/checkout', 'checkout'],
  ['nestjs-hubtel/service-app', 'service-app'],
  ['nestjs-hubtel/sandbox', 'sandbox'],
  ['nestjs-hubtel/testing', 'testing'],
  ['nestjs-hubtel/redis', 'redis'],
  ['nestjs-hubtel/bullmq', 'bullmq'],
  ['nestjs-hubtel/health', 'health'],
  ['nestjs-hubtel/metrics', 'metrics'],
] as const;

/** The documentation shipped beside README.md (package.json "files"). */
const DOCUMENTS = [
  'CHANGELOG.md',
  'docs/accounts.md',
  'docs/architecture.md',
  'docs/checkout.md',
  'docs/dev-tools.md',
  'docs/development.md',
  'docs/operations.md',
  'docs/quick-start.md',
  'docs/redis.md',
  'docs/service-app.md',
  'docs/sms.md',
  'docs/testing.md',
  'libs/sandbox/README.md',
];
const credentials = { id: 'fixture-client-id', secret: 'fixture-client-secret' };
const expectedAuth = `Basic ${Buffer.from(`${credentials.id}:${credentials.secret}`).toString('base64')}`;

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The child gets our environment minus what `npm test` and Jest put in it for *this* project. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || ['INIT_CWD', 'JEST_WORKER_ID', 'NODE_OPTIONS', 'NODE_ENV'].includes(key))
      continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, env = childEnv()): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function mustRun(
  command: string,
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0) {
    throw new Error(
      `\`${command} ${args.join(' ')}\` in ${cwd} exited with ${result.code}\n--- stdout\n${result.stdout.slice(-6000)}\n--- stderr\n${result.stderr.slice(-6000)}`,
    );
  }
  return result.stdout;
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** One installer at a time per cached fixture (parallel runs from two clones share the cache). */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 15 * MINUTE;
  for (;;) {
    try {
      await fs.mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const stat = await fs.stat(lock).catch(() => undefined);
      if (stat && Date.now() - stat.mtimeMs > 20 * MINUTE)
        await fs.rm(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`, { cause: err });
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

/** Where fixture `name`'s dependencies are cached, keyed on its package.json and Node's major. */
async function fixtureDir(name: string): Promise<string> {
  const manifest = await fs.readFile(path.join(fixturesDir, name, 'package.json'));
  const key = createHash('sha256')
    .update(manifest)
    .update(process.version.split('.')[0]!)
    .digest('hex')
    .slice(0, 12);
  return path.join(cacheRoot, `${name}-${key}`);
}

/** Installs fixture `name`'s registry dependencies into its cache directory, unless already there. */
async function installDependencies(name: string): Promise<void> {
  const dir = await fixtureDir(name);
  await fs.mkdir(cacheRoot, { recursive: true });
  await withLock(dir, async () => {
    const marker = path.join(dir, '.deps-installed');
    if (await exists(marker)) return;
    await fs.rm(dir, { recursive: true, force: true });
    await fs.cp(path.join(fixturesDir, name), dir, { recursive: true });
    await mustRun('npm', ['install', '--no-audit', '--no-fund'], dir);
    await fs.writeFile(marker, new Date().toISOString());
  });
}

/**
 * Every fixture's dependencies, installed at once when the file loads (network-bound: they overlap
 * each other and the pack). A failed install fails the tests that use that fixture.
 */
const dependencies = new Map(
  ['nest12-esm', 'nest11-cjs', 'nest11-esm', 'nest12-fastify'].map((name) => {
    const installing = installDependencies(name);
    installing.catch(() => undefined);
    return [name, installing] as const;
  }),
);

/** How the package's dist/ installed at `installed` differs from the build at `built`, if it does. */
async function installedDifference(installed: string, built: string): Promise<string | undefined> {
  const files = await listFiles(installed).catch(() => [] as string[]);
  const wanted = (await listFiles(built)).filter((f) => /^(esm|cjs)[\\/]/.test(f));
  const missing = wanted.filter((f) => !files.includes(f));
  const extra = files.filter((f) => !wanted.includes(f));
  if (missing.length || extra.length) return `missing ${missing.join(', ')}; extra ${extra.join(', ')}`;
  for (const file of files) {
    const [a, b] = await Promise.all([
      fs.readFile(path.join(installed, file)),
      fs.readFile(path.join(built, file)),
    ]);
    if (!a.equals(b)) return `installed ${file} differs from the fresh build`;
  }
  return undefined;
}

/** What a fixture's install and compile are made of: the tarball's bytes and the fixture's sources. */
async function inputsOf(name: string, tarball: string): Promise<string> {
  const hash = createHash('sha256').update(await fs.readFile(tarball));
  for (const part of [name, 'shared']) {
    const root = path.join(fixturesDir, part);
    for (const file of await listFiles(root))
      hash.update(`${part}/${file}\0`).update(await fs.readFile(path.join(root, file)));
  }
  return hash.digest('hex');
}

/**
 * Brings fixture `name`'s directory (lock held) to what this run's tests use: fresh sources, the
 * freshly packed tarball installed on top of the cached dependencies (by `npm install <tarball>`, as
 * a user would, or as a copy of that install: copyNpmInstall), and the app compiled by the fixture's
 * own TypeScript. Done once per set of inputs (stamped with their hash), so both groups below use
 * one compile, and a run whose tarball and fixture are byte for byte the last one's reuses its
 * install and compile (what is installed is still compared with this run's build); done again if
 * another clone took the directory over.
 */
async function refreshFixture(name: string, dir: string, tarball: string, built: string): Promise<void> {
  const stamp = path.join(dir, '.prepared-for');
  const installed = path.join(dir, 'node_modules', 'nestjs-hubtel', 'dist');
  const inputs = await inputsOf(name, tarball);
  const current = await fs.readFile(stamp, 'utf8').catch(() => '');
  if (current === inputs && !(await installedDifference(installed, built))) return;
  await fs.rm(stamp, { force: true });
  // Fresh sources every run; keep only the cached dependency tree and the last compile (dist/,
  // with the compiler's state: see tsc()).
  for (const entry of await fs.readdir(dir)) {
    if (!['node_modules', 'package-lock.json', '.deps-installed', 'dist'].includes(entry)) {
      await fs.rm(path.join(dir, entry), { recursive: true, force: true });
    }
  }
  await fs.cp(path.join(fixturesDir, name), dir, { recursive: true });
  // What every fixture app shares (its entry list, the paid checkout) is kept once, in shared/.
  await fs.cp(path.join(fixturesDir, 'shared'), path.join(dir, 'src'), { recursive: true });
  // Installed by every run, even over identical files: the manifest (peer ranges, bins) is this run's.
  await fs.rm(path.join(dir, 'node_modules', 'nestjs-hubtel'), { recursive: true, force: true });
  if (name === NPM_INSTALLED || !(await copyNpmInstall(dir, tarball, built))) {
    // Peer ranges are checked here: npm refuses the install if they do not fit this Nest major.
    // The cached dependencies' metadata is not fetched again (--prefer-offline): only the tarball is new.
    const install = ['install', '--no-audit', '--no-fund', '--no-save', '--prefer-offline', tarball];
    await mustRun('npm', install, dir);
  }
  // Emitting (not just --noEmit) type-checks the app (and the Nest 11 CommonJS app's specs)
  // against the installed declarations AND yields the app the tests run.
  await tsc(dir, 'tsconfig.json');
  await fs.writeFile(stamp, inputs);
}

/** The fixture `npm install` puts this run's tarball into; the others get a copy of what it put there. */
const NPM_INSTALLED = 'nest12-esm';

/**
 * NPM_INSTALLED's install of this run's tarball, copied aside once prepared: the package and the
 * packages npm installed at the top of node_modules for its own dependencies (`packages`, by name),
 * and npm's bin links into them.
 */
let npmInstall: { dir: string; packages: string[]; links: Record<string, string> } | undefined;

/**
 * The packages at the top of `modules` that the package at `root` needs, through its dependencies
 * and theirs, found as Node finds them (nested first, then upwards); peers are the app's own.
 */
async function topLevelClosure(modules: string, root: string): Promise<string[]> {
  const top = new Set<string>();
  const seen = new Set<string>();
  const resolve = async (from: string, name: string): Promise<string | undefined> => {
    for (let dir = from; ; dir = path.dirname(dir)) {
      if (path.basename(dir) !== 'node_modules') {
        const candidate = path.join(dir, 'node_modules', name);
        if (await exists(path.join(candidate, 'package.json'))) return candidate;
      }
      if (dir === path.dirname(modules) || dir === path.dirname(dir)) return undefined;
    }
  };
  const visit = async (dir: string): Promise<void> => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const found = await resolve(dir, name);
      if (!found) continue; // npm ls, in the fixture the copy goes to, reports what is missing
      if (path.dirname(found) === modules || path.dirname(path.dirname(found)) === modules)
        top.add(path.relative(modules, found));
      await visit(found);
    }
  };
  await visit(root);
  return [...top].sort();
}

/** Copies what npm installed for the package in fixture `dir` (lock held) to `aside`, with npm's links to its bins and theirs. */
async function setAside(dir: string, aside: string): Promise<typeof npmInstall> {
  const from = path.join(dir, 'node_modules');
  const copy = path.join(aside, 'installed');
  await fs.rm(copy, { recursive: true, force: true });
  const packages = ['nestjs-hubtel', ...(await topLevelClosure(from, path.join(from, 'nestjs-hubtel')))];
  for (const name of packages)
    await fs.cp(path.join(from, name), path.join(copy, name), { recursive: true, verbatimSymlinks: true });
  const links: Record<string, string> = {};
  for (const link of await fs.readdir(path.join(from, '.bin'))) {
    const target = await fs.readlink(path.join(from, '.bin', link)).catch(() => '');
    if (packages.some((name) => target.startsWith(`..${path.sep}${name}${path.sep}`))) links[link] = target;
  }
  return { dir: copy, packages, links };
}

/**
 * Puts the package into fixture `dir` as npm installed it into NPM_INSTALLED for this run: its files
 * (modes kept: npm made the bins executable), the packages npm installed for its dependencies (those
 * the fixture has none of) and npm's own links to their bins. One `npm install` of the tarball
 * instead of four (each re-reads the metadata of the whole tree: about 6 s of CPU). Kept only if npm
 * then finds every edge of the fixture's tree satisfied (`npm ls`, reading the tree itself: the
 * package's peer ranges against this Nest major, its own dependencies present, with the versions
 * this fixture has); false otherwise, and the caller installs with npm, which refuses what does
 * not fit.
 */
async function copyNpmInstall(dir: string, tarball: string, built: string): Promise<boolean> {
  await prepared(NPM_INSTALLED, tarball, built).catch(() => undefined);
  if (!npmInstall) return false;
  const to = path.join(dir, 'node_modules');
  const copied: string[] = [];
  for (const name of npmInstall.packages) {
    // A dependency the fixture already has stays the fixture's: npm ls judges its version.
    if (name !== 'nestjs-hubtel' && (await exists(path.join(to, name)))) continue;
    const options = { recursive: true, verbatimSymlinks: true };
    await fs.cp(path.join(npmInstall.dir, name), path.join(to, name), options);
    copied.push(name);
  }
  await fs.mkdir(path.join(to, '.bin'), { recursive: true });
  for (const [name, target] of Object.entries(npmInstall.links)) {
    if (!copied.some((pkg) => target.startsWith(`..${path.sep}${pkg}${path.sep}`))) continue;
    await fs.rm(path.join(to, '.bin', name), { force: true });
    await fs.symlink(target, path.join(to, '.bin', name));
  }
  // npm's record of the tree (the hidden lockfile) predates the copy: npm ls reads the tree instead.
  await fs.rm(path.join(to, '.package-lock.json'), { force: true });
  const listed = await run('npm', ['ls', '--all', '--json'], dir);
  let problems: string[];
  try {
    problems = (JSON.parse(listed.stdout) as { problems?: string[] }).problems ?? [];
  } catch {
    return false;
  }
  // Extraneous: installed but not in the fixture's package.json, as `npm install --no-save` leaves it.
  return problems.every((problem) => problem.startsWith('extraneous:'));
}

/**
 * The fixture's own TypeScript on `project`, incremental: its state is kept in dist/ with what it
 * emitted, keyed on every file's text, so a run checks again only what changed (this build's
 * declarations and what uses them) and still reports every error, cached ones included.
 * Every declaration file is checked (the fixtures keep skipLibCheck off, TypeScript's default, so
 * an error inside the package's own .d.ts fails), but TypeScript's bundled lib.*.d.ts: the same
 * text in every run, about a fifth of each check's CPU.
 */
function tsc(dir: string, project: string, ...args: string[]): Promise<string> {
  const state = path.join('dist', `${project}.tsbuildinfo`);
  const compiler = bin(dir, 'typescript/bin/tsc');
  return mustRun(
    process.execPath,
    [compiler, '-p', project, '--incremental', '--tsBuildInfoFile', state, '--skipDefaultLibCheck', ...args],
    dir,
  );
}

/** Each fixture's preparation for this run, started as soon as the tarball is packed. */
const preparing = new Map<string, Promise<void>>();
function prepared(name: string, tarball: string, built: string): Promise<void> {
  let done = preparing.get(name);
  if (!done) {
    done = (async () => {
      await (dependencies.get(name) ?? installDependencies(name));
      const dir = await fixtureDir(name);
      await withLock(dir, async () => {
        await refreshFixture(name, dir, tarball, built);
        if (name === NPM_INSTALLED) npmInstall = await setAside(dir, path.dirname(tarball));
      });
    })();
    done.catch(() => undefined); // the test using the fixture reports it
    preparing.set(name, done);
  }
  return done;
}

/** Runs `work` in fixture `name`, prepared for this run, its installed package exactly this run's build. */
async function prepareFixture(
  name: string,
  tarball: string,
  /** The dist/ the tarball was packed from. */
  built: string,
  work: (dir: string) => Promise<void>,
): Promise<void> {
  await prepared(name, tarball, built);
  const dir = await fixtureDir(name);
  await withLock(dir, async () => {
    await refreshFixture(name, dir, tarball, built);
    // The installed package must be exactly this run's build.
    const installed = path.join(dir, 'node_modules', 'nestjs-hubtel', 'dist');
    expect(await installedDifference(installed, built)).toBeUndefined();
    await work(dir);
  });
}

/** The environment for a fixture's bins: their `#!/usr/bin/env node` finds this node first. */
function binEnv(): NodeJS.ProcessEnv {
  const env = childEnv();
  env.PATH = [path.dirname(process.execPath), env.PATH].filter(Boolean).join(path.delimiter);
  return env;
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if it exits or is silent too long. */
function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const done = (fn: () => void) => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      fn();
    };
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = out.match(pattern);
      if (match) done(() => resolve(match));
    };
    const onExit = (code: number | null) =>
      done(() => reject(new Error(`exited with ${code} before printing ${pattern}\n${out}\n${err}`)));
    const timer = setTimeout(
      () => done(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms\n${out}\n${err}`))),
      timeoutMs,
    );
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', onData);
    child.on('exit', onExit);
  });
}

/** A fixture's own copy of a tool, run with this node. */
function bin(dir: string, script: string): string {
  return path.join(dir, 'node_modules', ...script.split('/'));
}

/** The package packed once per run (in a temporary copy of the repo), shared by both groups below. */
interface Packed {
  stageDir: string;
  packDir: string;
  tarball: string;
}
let packing: Promise<Packed> | undefined;
let background: Promise<void> | undefined;
function pack(): Promise<Packed> {
  packing ??= (async () => {
    const packDir = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-pack-'));
    const stageDir = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-stage-'));
    const skip = new Set(
      ['.git', 'node_modules', 'dist', 'coverage', '.tmp'].map((d) => path.join(repoRoot, d)),
    );
    await fs.cp(repoRoot, stageDir, {
      recursive: true,
      filter: (src) => !skip.has(src) && !src.includes(`${path.sep}node_modules${path.sep}`),
    });
    await fs.symlink(path.join(repoRoot, 'node_modules'), path.join(stageDir, 'node_modules'), 'dir');
    // `npm pack` runs `prepack` (the real build), exactly as publishing would.
    await mustRun('npm', ['pack', '--pack-destination', packDir], stageDir);
    const packed = (await fs.readdir(packDir)).filter((f) => f.endsWith('.tgz'));
    expect(packed).toHaveLength(1);
    const tarball = path.join(packDir, packed[0]!);
    // Every fixture prepared in the background, one at a time in the order the tests use them:
    // a test's app runs while the next fixture compiles.
    background = ['nest12-esm', 'nest11-cjs', 'nest11-esm', 'nest12-fastify'].reduce<Promise<void>>(
      (previous, name) =>
        previous.then(() => prepared(name, tarball, path.join(stageDir, 'dist')).catch(() => undefined)),
      Promise.resolve(),
    );
    return { stageDir, packDir, tarball };
  })();
  return packing;
}
afterAll(async () => {
  const done = await packing?.catch(() => undefined);
  await background;
  for (const dir of [done?.packDir, done?.stageDir])
    if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('packaging: the packed tarball in a Nest 12 ESM app and a Nest 11 CommonJS app', () => {
  let packDir: string;
  let stageDir: string;
  let tarball: string;
  let fake: http.Server;
  let fakeUrl: string;
  let received: Received[] = [];
  let batchId = '';
  let messageId = '';

  beforeAll(async () => {
    ({ packDir, stageDir, tarball } = await pack());

    fake = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (req.method === 'POST' && req.url === '/v1/messages/batch/simple/send') {
          const sent = JSON.parse(body) as { Recipients: string[]; Content: string };
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              batchId,
              status: 0,
              data: sent.Recipients.map((recipient) => ({ recipient, content: sent.Content, messageId })),
            }),
          );
        } else {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: 'not found' }));
        }
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  }, 10 * MINUTE);

  afterAll(async () => {
    await new Promise((resolve) => (fake ? fake.close(resolve) : resolve(undefined)));
  });

  beforeEach(() => {
    received = [];
    batchId = `batch-${randomUUID()}`;
    messageId = `msg-${randomUUID()}`;
  });

  function expectOneBatchSend(): void {
    expect(received).toHaveLength(1); // the invalid send reached nothing
    const [request] = received;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/v1/messages/batch/simple/send');
    expect(request!.headers.authorization).toBe(expectedAuth);
    expect(request!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(request!.body)).toEqual({ From: 'Shop', Recipients: ['233241234567'], Content: 'hi' });
  }

  function appEnv(): NodeJS.ProcessEnv {
    return childEnv({
      SMS_CLIENT_ID: credentials.id,
      SMS_CLIENT_SECRET: credentials.secret,
      SMS_BASE_URL: fakeUrl,
      EXPECT_BATCH_ID: batchId,
      EXPECT_MESSAGE_ID: messageId,
    });
  }

  it('contains both builds with declarations, the documentation, and nothing else', async () => {
    const listing = await mustRun('tar', ['-tzf', tarball], packDir);
    const files = listing.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        ...DOCUMENTS.map((doc) => `package/${doc}`),
      ]),
    );
    for (const [, entry] of ENTRIES) {
      expect(files).toEqual(
        expect.arrayContaining([
          `package/dist/esm/${entry}/index.js`,
          `package/dist/esm/${entry}/index.d.ts`,
          `package/dist/cjs/${entry}/index.cjs`,
          `package/dist/cjs/${entry}/index.d.cts`,
        ]),
      );
    }
    // nestjs-hubtel/internal: what the libs share, loaded by them through the package's name.
    expect(files).toEqual(
      expect.arrayContaining([
        'package/dist/esm/core/internal.js',
        'package/dist/esm/core/internal.d.ts',
        'package/dist/cjs/core/internal.cjs',
        'package/dist/cjs/core/internal.d.cts',
      ]),
    );
    const unexpected = files.filter(
      (f) =>
        !/^package\/(package\.json|README\.md|CHANGELOG\.md|LICENSE|docs\/[\w-]+\.md|libs\/sandbox\/README\.md|dist\/(esm|cjs)\/.+)$/.test(
          f,
        ) || /\.(spec|e2e-spec)\./.test(f),
    );
    expect(unexpected).toEqual([]);
  });

  it('carries its documentation: every link of the packed Markdown resolves inside the tarball or is absolute', async () => {
    const listing = await mustRun('tar', ['-tzf', tarball], packDir);
    const files = new Set(
      listing
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^package\//, '')),
    );
    const unpacked = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-unpacked-'));
    try {
      await mustRun('tar', ['-xzf', tarball, '-C', unpacked], packDir);
      const documents: Record<string, string> = {};
      for (const file of [...files].filter((f) => f.endsWith('.md')))
        documents[file] = await fs.readFile(path.join(unpacked, 'package', file), 'utf8');
      expect(Object.keys(documents).sort()).toEqual(['README.md', ...DOCUMENTS].sort());
      expect(unresolvedLinks(documents, files)).toEqual([]);
      // The project has no public repository, home page or issue tracker (yet): the manifest
      // names none rather than an address that does not exist, and no link names the old fake one.
      const manifest = JSON.parse(
        await fs.readFile(path.join(unpacked, 'package', 'package.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect({
        repository: manifest.repository,
        homepage: manifest.homepage,
        bugs: manifest.bugs,
      }).toEqual({ repository: undefined, homepage: undefined, bugs: undefined });
      const fake = /github\.com\/nestjs-hubtel\/nestjs-hubtel/i;
      expect(
        [...Object.entries(documents), ['package.json', JSON.stringify(manifest)] as const]
          .filter(([, text]) => fake.test(text))
          .map(([file]) => file),
      ).toEqual([]);
    } finally {
      await fs.rm(unpacked, { recursive: true, force: true });
    }
  });

  it(
    'Nest 12 ESM app (node): compiles against the declarations, boots, sends through SmsService, builds a RedisStore; the installed bins run',
    async () => {
      await prepareFixture('nest12-esm', tarball, path.join(stageDir, 'dist'), async (dir) => {
        // Compiled against the ESM declarations by refreshFixture.
        const stdout = await mustRun(process.execPath, ['dist/main.js'], dir, appEnv());
        const out = JSON.parse(stdout.trim().split('\n').pop()!) as {
          status: number;
          sent: Record<string, unknown>;
          rejected: Record<string, unknown>;
          redisStore: Record<string, unknown>;
          resolved: Record<string, string>;
          exported: Record<string, number>;
        };
        expect(out.status).toBe(201);
        expect(out.sent.batchId).toBe(batchId);
        expect(JSON.stringify(out.sent)).toContain(messageId);
        expect(JSON.stringify(out.sent)).toContain('233241234567');
        expect(out.rejected).toEqual({ thrown: true, isHubtelError: true, code: 'HUBTEL_VALIDATION_FAILED' });
        expect(out.redisStore).toEqual({
          isStore: true,
          module: 'function',
          failed: true,
          isHubtelError: true,
          code: 'HUBTEL_STORE_UNAVAILABLE',
        });
        for (const [name, area] of ENTRIES) {
          expect(out.resolved[name]).toMatch(
            new RegExp(`/node_modules/nestjs-hubtel/dist/esm/${area}/index\\.js$`),
          );
        }
        expect(out.exported['nestjs-hubtel']).toBeGreaterThan(0);
        expect(out.exported['nestjs-hubtel/sms']).toBeGreaterThan(0);
        expectOneBatchSend();

        // The bins as npm linked them: executable, with a shebang that runs them under node (the
        // other two bins' --help: the first-hour test of this fixture below).
        const bins = path.join(dir, 'node_modules', '.bin');
        const help = await run(path.join(bins, 'hubtel-sandbox'), ['--help'], dir, binEnv());
        expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
        expect(help.stdout).toMatch(/^Usage: hubtel-sandbox /);
        expect(help.stdout).toContain('-h, --help');

        // A sandbox on a free port: it prints its URL, answers there, talks to the other bins,
        // and stops cleanly on SIGTERM.
        const sandbox = spawn(path.join(bins, 'hubtel-sandbox'), ['--port', '0'], {
          cwd: dir,
          env: binEnv(),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          sandbox.once('exit', (code, signal) => resolve({ code, signal })),
        );
        let sandboxOut = '';
        sandbox.stdout.on('data', (chunk: Buffer) => (sandboxOut += chunk.toString()));
        try {
          const [, url] = await waitForOutput(sandbox, /listening on (http:\/\/127\.0\.0\.1:\d+)\n/, 30_000);
          const info = await fetch(`${url}/_sandbox`);
          expect(info.status).toBe(200);
          expect(await info.json()).toMatchObject({ name: 'nestjs-hubtel sandbox', url });
          const triggered = await run(
            path.join(bins, 'hubtel-trigger'),
            ['fulfillment-callback', url!, '--session-id', 'pkg-s', '--order-id', 'pkg-o', '--no-color'],
            dir,
            binEnv(),
          );
          expect(triggered).toMatchObject({ code: 0, stderr: '' });
          expect(triggered.stdout).toContain('HTTP 200');
          const callbacks = (await (
            await fetch(`${url}/_sandbox/fulfillment-callbacks`)
          ).json()) as unknown[];
          expect(callbacks).toEqual([expect.objectContaining({ sessionId: 'pkg-s', orderId: 'pkg-o' })]);
        } finally {
          sandbox.kill('SIGTERM');
        }
        expect(await exited).toEqual({ code: 0, signal: null });
        expect(sandboxOut).toContain('SIGTERM: stopping the sandbox');
      });
    },
    20 * MINUTE,
  );

  it(
    'Nest 11 CommonJS app: type-checks (node16 and node10 resolution) and its Jest (CommonJS mode) suite sends through SmsService, uses the testing kit and builds a RedisStore',
    async () => {
      await prepareFixture('nest11-cjs', tarball, path.join(stageDir, 'dist'), async (dir) => {
        // tsconfig.json (node16 resolution) compiled the app and its specs in refreshFixture.
        await tsc(dir, 'tsconfig.node10.json', '--noEmit');

        const report = path.join(dir, 'jest-report.json');
        await fs.rm(report, { force: true }); // a report from an earlier run proves nothing
        await mustRun(
          process.execPath,
          [bin(dir, 'jest/bin/jest.js'), '--ci', '--runInBand', '--json', `--outputFile=${report}`],
          dir,
          appEnv(),
        );
        const summary = JSON.parse(await fs.readFile(report, 'utf8')) as {
          numTotalTests: number;
          numPassedTests: number;
        };
        // One test per entry point, the SMS send and the error-class check, the two testing kit
        // tests (test/fixtures/nest11-cjs/test/testing-kit.spec.ts), the Redis store
        // (test/fixtures/nest11-cjs/test/redis.spec.ts) and Nest 11's console output
        // (test/fixtures/nest11-cjs/test/logs.spec.ts: no context-only line, no credential).
        expect(summary).toMatchObject({
          numTotalTests: ENTRIES.length + 6,
          numPassedTests: ENTRIES.length + 6,
        });
        expectOneBatchSend();
      });
    },
    20 * MINUTE,
  );
});

/**
 * A user's first hour, in each supported pairing: the README's install line for it IS the
 * fixture's dependencies; every named import the ESM build makes of another package is found in
 * the versions that line installed (Node's CommonJS named-export detection differs between
 * versions: @nestjs/event-emitter 3 hides names 12 exports); every entry point imports from ESM
 * (and requires from CommonJS on the Nest 11 line, which is CommonJS); `nestjs-hubtel/internal` is
 * no entry point; every bin runs; and the app, started with `hubtel-sandbox --env`'s lines, takes
 * one paid checkout through a decorated handler over real HTTP.
 */
const FIRST_HOUR = [
  { fixture: 'nest11-cjs', line: 'Nest 11, Express', require: true },
  { fixture: 'nest11-esm', line: 'Nest 11, Fastify', require: true },
  { fixture: 'nest12-esm', line: 'Nest 12, Express', require: false },
  { fixture: 'nest12-fastify', line: 'Nest 12, Fastify', require: false },
] as const;

describe('packaging: the first hour of a Nest user, per README install line', () => {
  let stageDir: string;
  let tarball: string;
  let esmImports: Record<string, string[]>;
  let installLines: Record<string, Record<string, string>>;

  beforeAll(async () => {
    ({ stageDir, tarball } = await pack());
    const imports = await namedImportsOf(path.join(stageDir, 'dist', 'esm'));
    esmImports = Object.fromEntries(
      Object.entries(imports).filter(([spec]) => !spec.startsWith('nestjs-hubtel')),
    );
    installLines = readmeInstallLines(await fs.readFile(path.join(repoRoot, 'README.md'), 'utf8'));
  }, 10 * MINUTE);

  it('the README has one install line per Nest major and platform, each the dependencies of a fixture', () => {
    expect(Object.keys(installLines).sort()).toEqual(FIRST_HOUR.map((f) => f.line).sort());
  });

  it.each(FIRST_HOUR)(
    '$fixture ($line): install line, imports from both module systems, bins, a paid checkout',
    async ({ fixture, line, require: canRequire }) => {
      // The fixture's dependencies are exactly the README's line (nestjs-hubtel is the tarball).
      const manifest = JSON.parse(
        await fs.readFile(path.join(fixturesDir, fixture, 'package.json'), 'utf8'),
      ) as { dependencies: Record<string, string> };
      const wanted = { ...installLines[line] };
      expect(wanted['nestjs-hubtel']).toBe('');
      delete wanted['nestjs-hubtel'];
      expect(Object.keys(manifest.dependencies).sort()).toEqual(Object.keys(wanted).sort());
      for (const [name, range] of Object.entries(wanted))
        if (range) expect({ name, range: manifest.dependencies[name] }).toEqual({ name, range });

      await prepareFixture(fixture, tarball, path.join(stageDir, 'dist'), async (dir) => {
        // 1. Every named import of the ESM build, against the versions this line installed; 2. every
        // entry point from ESM, and from CommonJS where the line is CommonJS; no internal entry.
        // One child for all three (Node's module loading is the subject, not the process).
        const names = ENTRIES.map(([name]) => name);
        const probed = await mustRun(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const wanted = ${JSON.stringify(esmImports)}; const missing = {};
             for (const [spec, names] of Object.entries(wanted)) {
               let ns; try { ns = await import(spec); } catch (err) { if (err.code === 'ERR_MODULE_NOT_FOUND') continue; throw err; }
               const absent = names.filter((n) => !(n in ns)); if (absent.length) missing[spec] = absent;
             }
             const imported = {}; for (const name of ${JSON.stringify(names)}) imported[name] = Object.keys(await import(name)).length;
             imported.internal = await import('nestjs-hubtel/internal').then(() => 'resolved', (err) => err.code);
             let required;
             if (${canRequire}) {
               const require = (await import('node:module')).createRequire(process.cwd() + '/');
               required = {}; for (const name of ${JSON.stringify(names)}) required[name] = Object.keys(require(name)).length;
               try { require('nestjs-hubtel/internal'); required.internal = 'resolved'; } catch (err) { required.internal = err.code; }
             }
             console.log(JSON.stringify({ missing, imported, required }));`,
          ],
          dir,
        );
        const {
          missing,
          imported: counts,
          required,
        } = JSON.parse(probed.trim()) as {
          missing: Record<string, string[]>;
          imported: Record<string, number | string>;
          required?: Record<string, number | string>;
        };
        expect(missing).toEqual({});
        for (const name of names)
          expect({ name, count: counts[name] }).toEqual({ name, count: expect.any(Number) });
        expect(counts.internal).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
        if (canRequire) expect(required).toEqual(counts);

        // 3. Every bin, as npm linked it.
        const bins = path.join(dir, 'node_modules', '.bin');
        const helps = await Promise.all(
          [
            ['hubtel-trigger', '--help'],
            ['hubtel-simulate', '--help'],
            ['hubtel-trigger', 'dead-letters', '--help'],
          ].map(async (args) => ({
            args,
            ...(await run(path.join(bins, args[0]!), args.slice(1), dir, binEnv())),
          })),
        );
        for (const { args, code, stdout, stderr } of helps) {
          expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: '' });
          expect(stdout).toMatch(new RegExp(`^Usage: ${args.slice(0, -1).join(' ')} `));
          if (args.length === 2) expect(stdout).toContain('-h, --help');
        }
        const sandbox = spawn(path.join(bins, 'hubtel-sandbox'), ['--env', '--port', '0'], {
          cwd: dir,
          env: binEnv(),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          sandbox.once('exit', (code, signal) => resolve({ code, signal })),
        );
        try {
          const [dotenv] = await waitForOutput(
            sandbox,
            /^# nestjs-hubtel sandbox at [^\n]+\n(?:[A-Z_]+=[^\n]*\n)+/m,
            30_000,
          );
          const sandboxUrl = /sandbox at (http:\/\/127\.0\.0\.1:\d+)/.exec(dotenv)![1]!;
          const env: Record<string, string> = { SANDBOX_URL: sandboxUrl };
          for (const [, key, value] of dotenv.matchAll(/^([A-Z_]+)=(.*)$/gm)) env[key!] = value!;
          expect(Object.keys(env)).toEqual(
            expect.arrayContaining(['HUBTEL_CLIENT_ID', 'HUBTEL_POS_SALES_ID']),
          );

          // 4. The app (compiled by the fixture's own TypeScript in refreshFixture): one paid checkout.
          const main = (await exists(path.join(dir, 'dist', 'src', 'paid-checkout.js')))
            ? path.join('dist', 'src', 'paid-checkout.js')
            : path.join('dist', 'paid-checkout.js');
          const out = await mustRun(process.execPath, [main], dir, childEnv(env));
          const result = JSON.parse(out.trim().split('\n').pop()!) as {
            adapter: string;
            payStatus: number;
            clientReference: string;
            paid: { clientReference: string; amountPaid: number; source: string };
          };
          expect(result).toEqual({
            adapter: line.endsWith('Fastify') ? 'fastify' : 'express',
            payStatus: 200,
            clientReference: result.clientReference,
            paid: { clientReference: result.clientReference, amountPaid: 12.5, source: 'callback' },
          });
        } finally {
          sandbox.kill('SIGTERM');
        }
        expect(await exited).toEqual({ code: 0, signal: null });
      });
    },
    20 * MINUTE,
  );
});
