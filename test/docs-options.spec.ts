import { readFileSync } from 'node:fs';
import { optionFields } from '#internal';
import { CheckoutModuleOptions } from '../libs/checkout/src/checkout.options.js';
import { ServiceAppModuleOptions } from '../libs/service-app/src/service-app.options.js';
import { SmsModuleOptions } from '../libs/sms/src/sms.options.js';

/*
 * The options reference tables are written by hand (defaults in words, a meaning), but the options
 * themselves are declared once, in each module's options class: every option declared there is in
 * its table, and every variable it reads is documented, or the docs have drifted.
 */

const root = new URL('..', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');
const docs = [
  'README.md',
  'docs/sms.md',
  'docs/accounts.md',
  'docs/checkout.md',
  'docs/service-app.md',
  'docs/quick-start.md',
]
  .map(read)
  .join('\n');

/** The option names in the first column of the table that follows `heading`. */
function tableOptions(file: string, heading: string): Set<string> {
  const text = read(file);
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`${file} has no "${heading}"`);
  const names = new Set<string>();
  let inTable = false;
  for (const line of text.slice(start).split('\n').slice(1)) {
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    for (const [, name] of line.split('|')[1]!.matchAll(/`([\w.]+)`/g)) names.add(name!.split('.')[0]!);
  }
  return names;
}

/** Every variable a class's options read, sections included. */
function variables(options: Function): string[] {
  return optionFields(options).flatMap((field) => [
    ...(field.spec.env ? [field.spec.env] : []),
    ...(field.spec.section ? variables(field.spec.section()) : []),
  ]);
}

describe.each([
  ['SmsModuleOptions', SmsModuleOptions, 'docs/sms.md', 'Options (`SmsModule.forRoot`'],
  ['CheckoutModuleOptions', CheckoutModuleOptions, 'docs/checkout.md', '## Options reference'],
  ['ServiceAppModuleOptions', ServiceAppModuleOptions, 'docs/service-app.md', '## Options\n'],
])('%s and its documentation', (_name, options, file, heading) => {
  it(`every option it declares is in the table of ${file}`, () => {
    const documented = tableOptions(file, heading);
    // `accounts` (the resolver) is documented with the other ways to add accounts, in docs/accounts.md.
    const declared = optionFields(options)
      .map((field) => field.key)
      .filter((key) => key !== 'accounts');
    expect(declared.filter((key) => !documented.has(key))).toEqual([]);
  });

  it('every variable it reads is documented', () => {
    const read = variables(options);
    expect(read.length).toBeGreaterThan(0);
    expect(read.filter((variable) => !docs.includes(variable))).toEqual([]);
  });
});
