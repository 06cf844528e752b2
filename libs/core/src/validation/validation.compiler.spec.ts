import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Min,
  registerDecorator,
  validateSync,
  ValidateNested,
  ValidatorConstraint,
  Validate,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { HubtelError, HubtelValidationError } from '../errors/hubtel.errors.js';
import {
  CheckoutCallbackDto,
  EverythingDto,
  HostDto,
  TreeNodeDto,
  validCheckoutCallback,
  validEverything,
} from './__fixtures__/validation-dtos.js';
import { compileValidator, inspectValidator, validateOrThrow } from './validation.compiler.js';
import { flattenValidationErrors } from './validation.runtime.js';
import type { CompileValidatorOptions, ValidationResult } from './validation.types.js';

type Json = Record<string, unknown>;
const ENGINES: Array<CompileValidatorOptions['engine']> = ['codegen', 'closures'];

function issuesOf<T>(result: ValidationResult<T>): Array<{ field: string; message: string }> {
  return result.ok ? [] : result.issues.map(({ field, message }) => ({ field, message }));
}

/** The accepted value as plain data (the compiled validator returns plain objects, not instances). */
function valueOf(result: ValidationResult<unknown>): Json {
  if (!result.ok) throw new Error(`expected an accepted input, got ${JSON.stringify(result.issues)}`);
  return result.value as Json;
}

function withData(patch: Json): Json {
  const body = validCheckoutCallback();
  return { ...body, Data: { ...(body.Data as Json), ...patch } };
}

describe.each(ENGINES)('compileValidator (%s engine)', (engine) => {
  const checkout = compileValidator(CheckoutCallbackDto, { engine });

  describe('accepted input', () => {
    it('returns a fresh plain object holding only the declared properties, recursively', () => {
      const body = validCheckoutCallback();
      const input = {
        ...body,
        Unknown: 'ignored',
        Data: {
          ...(body.Data as Json),
          Extra: 1,
          PaymentDetails: { ...((body.Data as Json).PaymentDetails as Json), Bank: 'x' },
        },
      };
      const result = checkout(input);
      expect(result).toEqual({ ok: true, value: validCheckoutCallback() });
      const value = valueOf(result);
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(value.Data)).toBe(Object.prototype);
      expect(value.Data).not.toBe(input.Data);
      expect(value).not.toHaveProperty('Unknown');
      expect(value.Data).not.toHaveProperty('Extra');
      expect((value.Data as Json).PaymentDetails).not.toHaveProperty('Bank');
    });

    it('leaves optional properties out when absent and keeps explicit nulls', () => {
      const result = checkout(withData({ SalesInvoiceId: undefined, Description: null }));
      expect(result.ok).toBe(true);
      const data = valueOf(result).Data as Json;
      expect(data).not.toHaveProperty('SalesInvoiceId');
      expect(data.Description).toBeNull();
    });

    it('applies class field defaults and @Type(() => Number) conversion like plainToInstance', () => {
      const everything = compileValidator(EverythingDto, { engine });
      const input = validEverything();
      delete input.WithDefault;
      const result = everything(input);
      expect(result.ok).toBe(true);
      expect(valueOf(result)).toMatchObject({ WithDefault: 'dflt', Converted: 12 });
    });
  });

  describe('messages', () => {
    it("reads exactly as class-validator's, with dotted fields", () => {
      expect(issuesOf(checkout(withData({ Amount: '12.50', ClientReference: '' })))).toEqual([
        { field: 'Data.ClientReference', message: 'ClientReference should not be empty' },
        // Decorators apply bottom-up: @Min(0) sits under @IsNumber(), so class-validator reports it first.
        { field: 'Data.Amount', message: 'Amount must not be less than 0' },
        { field: 'Data.Amount', message: 'Amount must be a number conforming to the specified constraints' },
      ]);
      expect(issuesOf(checkout({ ResponseCode: '0000', Status: 'Success', Data: 'paid' }))).toEqual([
        { field: 'Data', message: 'Data must be an object' },
        { field: 'Data', message: 'nested property Data must be either object or array' },
      ]);
      expect(issuesOf(checkout(withData({ PaymentDetails: { PaymentType: 5, Channel: null } })))).toEqual([
        { field: 'Data.PaymentDetails.PaymentType', message: 'PaymentType must be a string' },
      ]);
    });

    it('indexes array elements as Items[2].Name', () => {
      const everything = compileValidator(EverythingDto, { engine });
      const result = everything({
        ...validEverything(),
        Items: [{ Name: 'Tea', Qty: 1 }, { Name: 'Rice', Qty: 1 }, { Name: 'x', Qty: 1 }, 7],
      });
      expect(issuesOf(result)).toEqual([
        { field: 'Items[2].Name', message: 'Name must be longer than or equal to 2 characters' },
        { field: 'Items[3]', message: 'each value in nested property Items must be either object or array' },
      ]);
    });

    it('uses custom message strings (with $value, $constraint1) and message functions', () => {
      const everything = compileValidator(EverythingDto, { engine });
      expect(issuesOf(everything({ ...validEverything(), Low: 3, Strict: 'x', Ref: '' }))).toEqual([
        { field: 'Ref', message: 'Ref must match ^[A-Z0-9-]+$ regular expression' },
        { field: 'Ref', message: 'Ref is required, got ' },
        { field: 'Strict', message: 'Strict needs a number (EverythingDto)' },
        { field: 'Low', message: 'Low must be at least 10 (got 3)' },
      ]);
    });

    it('copies primitive rejected values into issues only when asked', () => {
      const withValues = compileValidator(CheckoutCallbackDto, { engine, includeValues: true });
      const result = withValues(withData({ Amount: 'ten', PaymentDetails: 'x' }));
      expect(result.ok ? [] : result.issues).toEqual([
        { field: 'Data.Amount', message: 'Amount must not be less than 0', value: 'ten' },
        {
          field: 'Data.Amount',
          message: 'Amount must be a number conforming to the specified constraints',
          value: 'ten',
        },
        { field: 'Data.PaymentDetails', message: 'PaymentDetails must be an object', value: 'x' },
        {
          field: 'Data.PaymentDetails',
          message: 'nested property PaymentDetails must be either object or array',
          value: 'x',
        },
      ]);
      expect((checkout(withData({ Amount: 'ten' })) as { issues: object[] }).issues[0]).not.toHaveProperty(
        'value',
      );
    });
  });

  describe('input that is not an object', () => {
    it.each([
      ['a string', '{"ResponseCode":"0000"}'],
      ['an array', [validCheckoutCallback()]],
      ['null', null],
      ['a number', 42],
      ['a boolean', true],
      ['undefined', undefined],
    ])('rejects %s with one issue on the root', (what, input) => {
      const result = checkout(input);
      expect(result).toEqual({
        ok: false,
        issues: [{ field: '', message: expect.stringContaining('must be a JSON object') }],
      });
      expect((result as { issues: Array<{ message: string }> }).issues[0].message).toContain(
        what === 'undefined' ? 'undefined' : what,
      );
    });

    it('reads objects without a prototype and class instances by their own properties', () => {
      const bare = Object.assign(Object.create(null) as Json, validCheckoutCallback());
      expect(checkout(bare).ok).toBe(true);
      const inherited = Object.create(validCheckoutCallback()) as Json; // nothing of its own
      expect(issuesOf(checkout(inherited)).map((issue) => issue.field)).toEqual([
        'ResponseCode',
        'ResponseCode',
        'Status',
        'Data',
        'Data',
      ]);
    });
  });

  describe('hostile input', () => {
    it('never pollutes prototypes and drops __proto__ / constructor keys from copied values', () => {
      const everything = compileValidator(EverythingDto, { engine });
      const text = JSON.stringify({ ...validEverything(), Meta: { ok: 1 }, Free: { list: [1, {}] } })
        .replace('"Meta":{', '"Meta":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},')
        .replace('"list":[1,{}]', '"list":[1,{"__proto__":{"polluted":1}}]');
      const body = JSON.parse(`{"__proto__":{"polluted":1},${text.slice(1)}`) as Json;
      const result = everything(body);
      expect(result.ok).toBe(true);
      const value = valueOf(result);
      expect(({} as Json).polluted).toBeUndefined();
      expect(Object.prototype.hasOwnProperty.call(value, '__proto__')).toBe(false);
      expect(Object.prototype.hasOwnProperty.call(value.Meta, '__proto__')).toBe(false);
      expect(Object.prototype.hasOwnProperty.call(value.Meta, 'constructor')).toBe(false);
      expect(value.Meta).toEqual({ ok: 1 });
      const listed = ((value.Free as Json).list as unknown[])[1] as Json;
      expect(Object.getPrototypeOf(listed)).toBe(Object.prototype);
      expect(Object.keys(listed)).toEqual([]);
    });

    it('does not read a DTO property through a polluted input prototype', () => {
      const body = validCheckoutCallback();
      const data = Object.create({ Amount: 5 }) as Json;
      Object.assign(data, body.Data as Json);
      delete data.Amount;
      expect(issuesOf(checkout({ ...body, Data: data }))).toContainEqual({
        field: 'Data.Amount',
        message: 'Amount must be a number conforming to the specified constraints',
      });
    });

    it('answers an own `constructor` key that makes class-transformer throw', () => {
      const body = JSON.parse(
        `{"Extra":{"constructor":2},${JSON.stringify(validCheckoutCallback()).slice(1)}`,
      ) as Json;
      expect(() => plainToInstance(CheckoutCallbackDto, body)).toThrow(TypeError);
      expect(checkout(body).ok).toBe(true);
    });

    it('rejects an array over its @ArrayMaxSize without visiting its elements', () => {
      const everything = compileValidator(EverythingDto, { engine });
      const items = new Array<unknown>(1_000_000).fill('not an item');
      const tags = new Array<unknown>(1_000_000).fill(12345678);
      const result = everything({ ...validEverything(), Items: items, Tags: tags });
      expect(issuesOf(result)).toEqual([
        { field: 'Tags', message: 'Tags must contain no more than 3 elements' },
        { field: 'Items', message: 'Items must contain no more than 5 elements' },
      ]);
    });

    it('bounds nesting in recursive DTOs, nested arrays and free-form objects instead of exhausting the stack', () => {
      const tree = compileValidator(TreeNodeDto, { engine });
      let root: Json = { Name: 'leaf' };
      for (let i = 0; i < 50_000; i++) root = { Name: `n${i}`, Children: [root] };
      const deepTree = tree(root);
      expect(deepTree.ok).toBe(false);
      expect(issuesOf(deepTree)).toHaveLength(1);
      expect(issuesOf(deepTree)[0].message).toBe('value is nested deeper than the allowed 32 levels');
      expect(issuesOf(deepTree)[0].field).toMatch(/^Children\[0\]\.Children\[0\]/);

      let arrays: unknown = [];
      for (let i = 0; i < 50_000; i++) arrays = [arrays];
      expect(issuesOf(tree({ Name: 'x', Children: arrays }))[0].message).toContain('nested deeper');

      const everything = compileValidator(EverythingDto, { engine });
      let meta: Json = {};
      for (let i = 0; i < 50_000; i++) meta = { meta };
      expect(issuesOf(everything({ ...validEverything(), Meta: meta }))).toEqual([
        { field: 'Meta', message: 'value is nested deeper than the allowed 32 levels' },
      ]);
    });

    it('honours maxDepth', () => {
      const shallow = compileValidator(TreeNodeDto, { engine, maxDepth: 2 });
      expect(shallow({ Name: 'a', Children: [{ Name: 'b' }] }).ok).toBe(true);
      expect(issuesOf(shallow({ Name: 'a', Children: [{ Name: 'b', Children: [{ Name: 'c' }] }] }))).toEqual([
        { field: 'Children[0].Children', message: 'value is nested deeper than the allowed 2 levels' },
      ]);
    });
  });

  describe('classes left to class-validator', () => {
    it('validates @Transform / @Expose classes through class-transformer, inside a compiled parent', () => {
      const host = compileValidator(HostDto, { engine });
      expect(host({ Title: 't', Trimmed: { Name: '  padded  ' }, People: [{ full_name: 'Ann' }] })).toEqual({
        ok: true,
        value: { Title: 't', Trimmed: { Name: 'padded' }, People: [{ FullName: 'Ann' }] },
      });
      expect(issuesOf(host({ Title: 't', Trimmed: { Name: '   ' }, People: [{ FullName: 'Ann' }] }))).toEqual(
        [
          { field: 'Trimmed.Name', message: 'Name should not be empty' },
          { field: 'People[0].FullName', message: 'FullName must be a string' },
        ],
      );
    });
  });
});

describe('inspectValidator', () => {
  it('compiles the checkout callback DTO entirely inline', () => {
    const report = inspectValidator(CheckoutCallbackDto);
    expect(report.engine).toBe('codegen');
    expect(report.classes.map((c) => [c.name, c.mode])).toEqual([
      ['CheckoutCallbackDto', 'compiled'],
      ['CheckoutCallbackDataDto', 'compiled'],
      ['CheckoutPaymentDetailsDto', 'compiled'],
    ]);
    for (const c of report.classes) for (const p of c.properties) expect(p.delegated).toEqual([]);
  });

  it('delegates IsUrl, custom constraints, and a custom decorator that only borrows a built-in name', () => {
    const props = new Map(inspectValidator(EverythingDto).classes[0].properties.map((p) => [p.name, p]));
    expect(props.get('Site')?.delegated).toEqual(['isUrl']);
    expect(props.get('Triple')?.delegated).toEqual(['divisibleBy']);
    expect(props.get('Even')?.delegated).toEqual(['isEven']);
    // FakeIsString registers the name "isString" with other semantics: the self-check refuses it.
    expect(props.get('Fake')).toMatchObject({ inline: [], delegated: ['isString'] });
    expect(props.get('Id')?.inline.sort()).toEqual(['isDefined', 'isString', 'maxLength', 'minLength']);
  });

  it('names the classes that fall back, and why', () => {
    const classes = inspectValidator(HostDto).classes;
    expect(classes.find((c) => c.name === 'TrimmedDto')).toMatchObject({
      mode: 'fallback',
      reason: 'Name uses @Transform',
    });
    expect(classes.find((c) => c.name === 'RenamedDto')).toMatchObject({
      mode: 'fallback',
      reason: 'uses @Expose/@Exclude',
    });
  });
});

describe('caching and options', () => {
  it('compiles once per class and option set', () => {
    expect(compileValidator(CheckoutCallbackDto)).toBe(compileValidator(CheckoutCallbackDto));
    expect(compileValidator(CheckoutCallbackDto, { engine: 'closures' })).not.toBe(
      compileValidator(CheckoutCallbackDto),
    );
  });

  it('validates groups like class-validator', () => {
    class Grouped {
      @IsString({ groups: ['create'] })
      Name: string;

      @IsInt()
      Count: number;
    }
    const input = { Name: 5, Count: 'x' };
    for (const groups of [undefined, ['create'], ['update']]) {
      const expected = flattenValidationErrors(
        validateSync(plainToInstance(Grouped, input), { groups, forbidUnknownValues: false }),
      );
      expect(issuesOf(compileValidator(Grouped, { groups })(input))).toEqual(expected);
    }
  });

  it('rejects bad options and unusable DTOs at compile time', () => {
    class NoRules {
      Name: string;
    }
    expect(() => compileValidator(NoRules)).toThrow(/declares no class-validator rules/);
    expect(() => compileValidator(CheckoutCallbackDto, { maxDepth: 0 })).toThrow(HubtelError);

    @ValidatorConstraint({ name: 'slowCheck', async: true })
    class SlowCheck implements ValidatorConstraintInterface {
      validate(): Promise<boolean> {
        return Promise.resolve(true);
      }
    }
    class AsyncDto {
      @Validate(SlowCheck)
      Name: string;
    }
    expect(() => compileValidator(AsyncDto)).toThrow(/async constraint "slowCheck"/);

    class ProtoNamed {}
    IsString()(ProtoNamed.prototype, 'toString');
    expect(() => compileValidator(ProtoNamed)).toThrow(/Object.prototype member/);
  });
});

describe('robustness', () => {
  it.each(ENGINES)('handles property names that are not identifiers (%s)', (engine) => {
    const names = ['we"ird', "it's", 'back\\slash', 'new\nline', '${x}', '*/ end', '\u2028sep'];
    class Odd {}
    for (const name of names) {
      IsString()(Odd.prototype, name);
      IsNotEmpty()(Odd.prototype, name);
    }
    const validate = compileValidator(Odd as new () => Json, { engine });
    const good = Object.fromEntries(names.map((name) => [name, 'v']));
    expect(validate(good)).toEqual({ ok: true, value: good });
    const bad = { ...good, [names[0]]: '', [names[5]]: 3 };
    expect(issuesOf(validate(bad))).toEqual([
      { field: 'we"ird', message: 'we"ird should not be empty' },
      { field: '*/ end', message: '*/ end must be a string' },
    ]);
  });

  it('fails closed when a custom constraint throws, instead of throwing', () => {
    function Explodes(): PropertyDecorator {
      return (object, propertyName) =>
        registerDecorator({
          name: 'explodes',
          target: object.constructor,
          propertyName: propertyName as string,
          validator: {
            validate: () => {
              throw new Error('boom');
            },
            defaultMessage: () => '$property exploded',
          },
        });
    }
    class Fragile {
      @Explodes()
      Name: string;
    }
    expect(issuesOf(compileValidator(Fragile)({ Name: 'x' }))).toEqual([
      { field: 'Name', message: 'Name exploded' },
    ]);
  });

  it('rejects numbers class-validator itself throws on (maxDecimalPlaces with 1e-7)', () => {
    class Price {
      @IsNumber({ maxDecimalPlaces: 2 })
      Amount: number;
    }
    expect(() => validateSync(plainToInstance(Price, { Amount: 1e-7 }))).toThrow(TypeError);
    expect(issuesOf(compileValidator(Price)({ Amount: 1e-7 }))).toEqual([
      { field: 'Amount', message: 'Amount must be a number conforming to the specified constraints' },
    ]);
    expect(compileValidator(Price)({ Amount: 1.25 }).ok).toBe(true);
  });

  it('validates a DTO that nests itself', () => {
    const tree = compileValidator(TreeNodeDto);
    expect(tree({ Name: 'a', Children: [{ Name: 'b', Children: [{ Name: 'c' }] }] }).ok).toBe(true);
    expect(issuesOf(tree({ Name: 'a', Children: [{ Name: 'b', Children: [{ Name: 3 }] }] }))).toEqual([
      { field: 'Children[0].Children[0].Name', message: 'Name must be a string' },
    ]);
  });

  it('treats @ValidateNested arrays without @ArrayMaxSize element by element', () => {
    class Line {
      @IsInt()
      @Min(1)
      Qty: number;
    }
    class Order {
      @ValidateNested({ each: true })
      @Type(() => Line)
      Lines: Line[];

      @IsOptional()
      @ArrayMaxSize(1)
      Notes?: string[];
    }
    const order = compileValidator(Order);
    expect(issuesOf(order({ Lines: [{ Qty: 1 }, { Qty: 0 }], Notes: ['a', 'b'] }))).toEqual([
      { field: 'Lines[1].Qty', message: 'Qty must not be less than 1' },
      { field: 'Notes', message: 'Notes must contain no more than 1 elements' },
    ]);
  });
});

describe('validateOrThrow', () => {
  it('returns the accepted value', () => {
    expect(validateOrThrow(CheckoutCallbackDto, validCheckoutCallback())).toEqual(validCheckoutCallback());
  });

  it('throws HubtelValidationError listing the issues', () => {
    let caught: unknown;
    try {
      validateOrThrow(CheckoutCallbackDto, withData({ Amount: 'x' }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HubtelValidationError);
    const error = caught as HubtelValidationError;
    expect(error.code).toBe('HUBTEL_VALIDATION_FAILED');
    expect(error.message).toBe(
      'Invalid CheckoutCallbackDto: Data.Amount: Amount must not be less than 0; Data.Amount: Amount must be a number conforming to the specified constraints',
    );
    expect(error.issues).toHaveLength(2);
    expect(() => validateOrThrow(CheckoutCallbackDto, 'nope')).toThrow(
      'Invalid CheckoutCallbackDto: request body must be a JSON object (received a string)',
    );
  });
});
