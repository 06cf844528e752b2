import { SERVICE_APP_DEFAULT_MESSAGES as M } from '../service-app.constants.js';
import { checkAnswer } from './service-flow.answers.js';
import type { StoredScreen } from '../service-flow.types.js';

const input = (fieldType: string, validation?: StoredScreen['validation']): StoredScreen => ({
  step: 's',
  kind: 'input',
  message: 'm',
  label: 'm',
  fieldType,
  field: 'f',
  ...(validation ? { validation } : {}),
});

const check = (screen: StoredScreen, raw: string) => checkAnswer(screen, raw, M, '233');

describe('checkAnswer', () => {
  it('normalises phone entries to the contract form, refusing what is not a number', () => {
    for (const raw of ['0241234567', '024 123 4567', '+233241234567', '233241234567', '00233 24-123-4567']) {
      expect(check(input('phone'), raw)).toEqual({ ok: true, value: '233241234567' });
    }
    for (const raw of ['abc', '12', '02412345678', '+233 0241234567']) {
      expect(check(input('phone'), raw)).toEqual({ ok: false, reason: M.phone });
    }
  });

  it('reads number and decimal entries as numbers, with bounds', () => {
    expect(check(input('number'), '42')).toEqual({ ok: true, value: 42 });
    expect(check(input('number'), '1,000')).toEqual({ ok: true, value: 1000 });
    expect(check(input('number'), '4.2')).toEqual({ ok: false, reason: M.number });
    expect(check(input('number'), '-3')).toEqual({ ok: false, reason: M.number });
    expect(check(input('number'), '99999999999999999999')).toEqual({ ok: false, reason: M.number });
    expect(check(input('decimal'), '10.50')).toEqual({ ok: true, value: 10.5 });
    expect(check(input('decimal'), '.5')).toEqual({ ok: true, value: 0.5 });
    expect(check(input('decimal'), '1e3')).toEqual({ ok: false, reason: M.decimal });
    expect(check(input('decimal', { min: 1, max: 100 }), '0.5')).toEqual({
      ok: false,
      reason: 'Please enter 1 or more.',
    });
    expect(check(input('DECIMAL', { min: 1, max: 100 }), '100')).toEqual({ ok: true, value: 100 });
  });

  it('checks e-mail, length, pattern and required', () => {
    expect(check(input('email'), 'a@b.gh')).toEqual({ ok: true, value: 'a@b.gh' });
    expect(check(input('email'), 'a@b')).toEqual({ ok: false, reason: M.email });
    expect(check(input('text'), '')).toEqual({ ok: false, reason: M.required });
    expect(check(input('text', { required: false }), '')).toEqual({ ok: true, value: '' });
    expect(check(input('text', { pattern: { source: '^\\d{4}$', flags: '' } }), '12a4')).toEqual({
      ok: false,
      reason: M.pattern,
    });
    expect(check(input('text', { maxLength: 2, message: 'Too long!' }), 'abc')).toEqual({
      ok: false,
      reason: 'Too long!',
    });
    expect(check(input('textarea'), 'free text')).toEqual({ ok: true, value: 'free text' });
  });

  it('accepts only an option Value for a select (exact, else ignoring case), returning the option', () => {
    const select: StoredScreen = {
      step: 's',
      kind: 'select',
      message: 'm',
      label: 'm',
      fieldType: 'text',
      field: 'f',
      options: [
        { Display: 'One GB', Value: '1gb', Amount: 5 },
        { Display: 'Five', Value: '5GB', Amount: 20 },
      ],
    };
    expect(check(select, '1gb')).toEqual({ ok: true, value: '1gb', option: select.options![0] });
    expect(check(select, '5gb')).toEqual({ ok: true, value: '5GB', option: select.options![1] });
    expect(check(select, '1')).toEqual({ ok: false, reason: M.select });
    expect(check(select, 'One GB')).toEqual({ ok: false, reason: M.select });
  });
});
