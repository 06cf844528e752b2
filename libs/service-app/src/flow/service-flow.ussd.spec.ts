import { HubtelConfigError } from 'nestjs-hubtel';
import { ussdScreen } from '#internal';
import { SERVICE_APP_OPTIONS_RECIPE, type ServiceAppModuleOptions } from '../service-app.options.js';

const resolveServiceAppOptions = (options?: ServiceAppModuleOptions) =>
  SERVICE_APP_OPTIONS_RECIPE.resolve(options);
import { cutToFit, detectChannel, transliterate } from '../service-app.ussd.js';
import { UssdScreens, layoutMenu } from './service-flow.ussd.js';
import type { StoredScreen } from '../service-flow.types.js';

const ussd = resolveServiceAppOptions({}).ussd;
const reserved = new Set(['9', '8', '0']);
const options = (
  count: number,
  label = (i: number) => `Bundle ${i + 1}: ${i + 1}GB for GHS ${(i + 1) * 5}.00`,
) => Array.from({ length: count }, (_, i) => label(i));

describe('USSD channel', () => {
  it('is USSD for Platform USSD (any case) and telco operators (any case, country suffix), app otherwise', () => {
    for (const operator of [
      'mtn',
      'MTN',
      'mtn-gh',
      'Vodafone',
      'tigo',
      'airtel',
      'AirtelTigo',
      'glo',
      'safaricom-ke',
    ])
      expect(detectChannel(undefined, operator, ussd)).toBe('ussd');
    for (const operator of ['Hubtel-Android', 'Hubtel-iOS', 'web', '', 'mtnx', 'my-mtn'])
      expect(detectChannel(undefined, operator, ussd)).toBe('app');
    expect(detectChannel(undefined, undefined, ussd)).toBe('app');
    expect(detectChannel('ussd', 'Hubtel-Android', ussd)).toBe('ussd');
    expect(detectChannel('Hubtel-App', 'Hubtel-Android', ussd)).toBe('app');
  });

  it('follows `ussd.operators` / `ussd.appOperators` for operators the built-in list does not know', () => {
    const custom = resolveServiceAppOptions({
      ussd: { operators: ['Orange'], appOperators: ['MTN-App'] },
    }).ussd;
    expect(detectChannel(undefined, 'orange-ci', custom)).toBe('ussd');
    expect(detectChannel(undefined, 'mtn-app', custom)).toBe('app');
  });
});

describe('USSD menus', () => {
  it('pages 30 options so every page fits, numbers skip the navigation keys, labels are never split', () => {
    const labels = options(30);
    const menu = layoutMenu('Choose a bundle for 233241234567:', labels, ussd, reserved);
    expect(menu.pages.length).toBeGreaterThan(2);
    const seen: string[] = [];
    menu.pages.forEach((page, index) => {
      expect(ussdScreen(page).fits).toBe(true);
      const lines = page.split('\n');
      expect(lines[0]).toBe('Choose a bundle for 233241234567:');
      const keys = lines.slice(1).map((line) => line.split('. ')[0]);
      // No key twice on a page, and the navigation keys mean only navigation.
      expect(new Set(keys).size).toBe(keys.length);
      expect(lines.includes('9. More')).toBe(index < menu.pages.length - 1);
      expect(lines.includes('8. Back')).toBe(index > 0);
      for (const line of lines.slice(1)) if (!/^[89]\. /.test(line)) seen.push(line.replace(/^\d+\. /, ''));
    });
    expect(seen).toEqual(labels);
    expect([...menu.numbers.keys()]).not.toContain('8');
    expect([...menu.numbers.keys()]).not.toContain('9');
    expect(menu.numbers.size).toBe(30);
    expect(menu.cut).toBe(false);
  });

  it('counts a page with a character outside GSM-7 against 70', () => {
    const labels = options(30, (i) => (i === 12 ? 'Ŋkɔmɔ bundle 13' : `Bundle ${i + 1}`));
    const menu = layoutMenu('Choose:', labels, ussd, reserved);
    const unicode = menu.pages.filter((page) => !ussdScreen(page).gsm7);
    expect(unicode).toHaveLength(1);
    expect(unicode[0]!.length).toBeLessThanOrEqual(70);
    for (const page of menu.pages) expect(ussdScreen(page).fits).toBe(true);
  });

  it('cuts a 200-character label with an ellipsis on a page of its own, never crashing', () => {
    const long = `${'Unlimited night and weekend browsing '.repeat(6)}`.slice(0, 200);
    const labels = ['Small', long, 'Large'];
    const menu = layoutMenu('Choose:', labels, ussd, reserved);
    const page = menu.pages.find((p) => p.includes('Unlimited'))!;
    expect(ussdScreen(page).fits).toBe(true);
    expect(page).toMatch(/\d\. Unlimited[^\n]*\.\.\.\n/);
    expect(page).not.toContain('Small');
    expect(menu.cut).toBe(true);
    // With a 200-character non-GSM label and a long prompt: still a page that fits.
    const worse = layoutMenu('Ɔ'.repeat(150), [`ŋ${'x'.repeat(199)}`], ussd, reserved);
    for (const p of worse.pages) expect(ussdScreen(p).fits).toBe(true);
  });

  it('transliterates on request so the screen keeps its 182 characters', () => {
    expect(transliterate('Café ‘special’ – ₵5…')).toBe("Café 'special' - GHS5...");
    expect(ussdScreen(transliterate('Ŋkɔmɔ')).gsm7).toBe(true);
  });

  it('cuts a long text at a word boundary with three dots (not …, which would make the screen UCS-2)', () => {
    const text = 'word '.repeat(60).trim();
    const cut = cutToFit(text, (t) => ussdScreen(t).fits);
    expect(cut.endsWith('word...')).toBe(true);
    expect(ussdScreen(cut).fits).toBe(true);
    expect(ussdScreen(cut).gsm7).toBe(true);
  });
});

describe('USSD re-asks', () => {
  const screens = new UssdScreens(ussd, ['0']);
  const menu = (count: number): StoredScreen =>
    ({
      step: 'pick',
      kind: 'select',
      message: 'Choose a bundle',
      label: 'Choose a bundle',
      field: 'bundle',
      fieldType: 'text',
      next: undefined,
      validation: undefined,
      options: options(count).map((Display, i) => ({ Display, Value: String(i), Amount: i })),
    }) as StoredScreen;

  it('keeps a reason outside GSM-7 on a full page: the page gives up its last options, keeps its navigation', () => {
    const page = screens.page(menu(30), 1, 'Épuisé: un autre ✗');
    const lines = page.text.split('\n');
    expect(ussdScreen(page.text)).toMatchObject({ gsm7: false, fits: true });
    expect(lines[0]).toBe('Épuisé: un autre ✗');
    expect(lines.slice(-2)).toEqual(['9. More', '8. Back']);
    expect(lines.length).toBeGreaterThan(3);
    expect(screens.page(menu(30), 1).text).toContain(lines.slice(1, -2).join('\n'));
  });

  it('shows a reason too long for any option beside it with the navigation lines only, cut to the screen', () => {
    const reason = `Ŋkɔmɔ ${'this bundle cannot be bought today '.repeat(3)}`;
    const page = screens.page(menu(30), 0, reason);
    const lines = page.text.split('\n');
    expect(ussdScreen(page.text)).toMatchObject({ gsm7: false, fits: true });
    expect(lines).toHaveLength(2);
    expect(lines[0]!.startsWith('Ŋkɔmɔ this bundle')).toBe(true);
    expect(lines[1]).toBe('9. More');
    expect(page.cut).toBe(true);
  });

  it('knows the navigation keys', () => {
    expect(['9', '8', '0', '1'].map((key) => screens.isNavigationKey(key))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('USSD options at start-up', () => {
  it('refuses texts that cannot fit a screen and keys that collide, with a typed error naming the option', () => {
    const problem = (options: object) => {
      try {
        resolveServiceAppOptions(options);
      } catch (error) {
        expect(error).toBeInstanceOf(HubtelConfigError);
        expect((error as HubtelConfigError).code).toBe('HUBTEL_CONFIG_INVALID');
        return (error as HubtelConfigError).option;
      }
      return undefined;
    };
    expect(problem({ messages: { busy: 'x'.repeat(200) } })).toBe('serviceApp.messages.busy');
    expect(problem({ messages: { busy: 'ŋ'.repeat(71) } })).toBe('serviceApp.messages.busy');
    expect(problem({ ussd: { moreKey: '8' } })).toBe('serviceApp.ussd.backKey');
    expect(problem({ ussd: { backKey: '0' } })).toBe('serviceApp.ussd.backKey');
    expect(problem({ ussd: { moreLabel: 'x'.repeat(30), backLabel: 'y'.repeat(30) } })).toBe(
      'serviceApp.ussd.moreLabel',
    );
    expect(problem({ ussd: { screenSize: 10 } })).toBe('serviceApp.ussd.screenSize');
    expect(problem({ ussd: { operators: 'mtn' } })).toBe('serviceApp.ussd.operators');
    expect(problem({ ussd: { moreKey: '#', backKey: '*', moreLabel: 'Next' } })).toBeUndefined();
  });
});
