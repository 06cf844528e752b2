import { Type } from 'class-transformer';
import {
  IsIn,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { compileValidator } from './validation.ajv.js';

/** A rule without an exact JSON Schema form is refused when the validator is built, never ignored. */
describe('compileValidator refuses the rules it does not convert', () => {
  it.each([
    ['@MinLength', () => MinLength(2)],
    ['@IsNumber with maxDecimalPlaces', () => IsNumber({ maxDecimalPlaces: 2 })],
    ['@IsNumber allowing NaN', () => IsNumber({ allowNaN: true })],
    ['@ValidateIf', () => ValidateIf(() => true)],
  ])('%s', (_name, rule) => {
    class Dto {
      @IsString()
      name!: string;

      @rule()
      @IsOptional()
      value?: unknown;
    }
    expect(() => compileValidator(Dto)).toThrow(
      expect.objectContaining({
        code: 'HUBTEL_CONFIG_INVALID',
        message: expect.stringMatching(/^Dto\.value: /),
      }),
    );
  });
});

/** A DTO the validator cannot check exactly stops the app when it is built, with the reason. */
describe('compileValidator refuses DTOs it cannot check exactly', () => {
  class Child {
    @IsString()
    name!: string;
  }
  it.each([
    ['a class with no rules', () => class Empty {}, /^Empty declares no class-validator rules$/],
    [
      '@IsIn with an object among its values',
      () => {
        class Dto {
          @IsIn([{ a: 1 }])
          value!: unknown;
        }
        return Dto;
      },
      /^Dto\.value: @IsIn with non-primitive values/,
    ],
    [
      'a /g pattern (it keeps state between calls)',
      () => {
        class Dto {
          @Matches(/a/g)
          value!: string;
        }
        return Dto;
      },
      /^Dto\.value: a \/g or \/y pattern/,
    ],
    [
      'a rule with `each`',
      () => {
        class Dto {
          @IsString({ each: true })
          value!: string[];
        }
        return Dto;
      },
      /^Dto\.value: @isString with groups, always or each/,
    ],
    [
      'a rule with groups',
      () => {
        class Dto {
          @IsString({ groups: ['admin'] })
          value!: string;
        }
        return Dto;
      },
      /^Dto\.value: @isString with groups, always or each/,
    ],
    [
      'two rules of one kind on a property',
      () => {
        class Dto {
          @Min(1)
          @Min(2)
          value!: number;
        }
        return Dto;
      },
      /^Dto\.value: @min twice on one property/,
    ],
    [
      '@ValidateNested without @IsObject',
      () => {
        class Dto {
          @ValidateNested()
          @Type(() => Child)
          child!: Child;
        }
        return Dto;
      },
      /^Dto\.child: @ValidateNested\(\) needs @IsObject\(\) beside it$/,
    ],
    [
      '@ValidateNested without @Type',
      () => {
        class Dto {
          @ValidateNested()
          @IsObject()
          child!: Child;
        }
        return Dto;
      },
      /^Dto\.child: @ValidateNested\(\) without @Type/,
    ],
  ])('%s', (_name, declare, message) => {
    expect(() => compileValidator(declare())).toThrow(
      expect.objectContaining({ code: 'HUBTEL_CONFIG_INVALID', message: expect.stringMatching(message) }),
    );
  });
});

describe('compileValidator', () => {
  it('checks two nested DTOs that share a class name each by its own rules', () => {
    const First = (() => {
      class Item {
        @IsString()
        label!: string;
      }
      return Item;
    })();
    const Second = (() => {
      class Item {
        @IsNumber()
        count!: number;
      }
      return Item;
    })();
    class Order {
      @ValidateNested()
      @IsObject()
      @Type(() => First)
      first!: InstanceType<typeof First>;

      @ValidateNested()
      @IsObject()
      @Type(() => Second)
      second!: InstanceType<typeof Second>;
    }
    const check = compileValidator(Order);
    expect(check({ first: { label: 'a' }, second: { count: 1 } })).toEqual({
      ok: true,
      value: { first: { label: 'a' }, second: { count: 1 } },
    });
    expect(check({ first: { count: 1 }, second: { label: 'a' } })).toEqual({
      ok: false,
      issues: [
        { field: 'first.label', message: 'first.label is required' },
        { field: 'second.count', message: 'second.count is required' },
      ],
    });
  });

  it('takes a pattern given as a string with flags, and says it when no message is given', () => {
    class Dto {
      @Matches('^ab$', 'i')
      code!: string;
    }
    const check = compileValidator(Dto);
    expect(check({ code: 'AB' })).toEqual({ ok: true, value: { code: 'AB' } });
    expect(check({ code: 'abc' })).toEqual({
      ok: false,
      issues: [{ field: 'code', message: 'code must match /^ab$/i' }],
    });
  });
});
