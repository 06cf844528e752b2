import { IsNumber, IsOptional, IsString, MinLength, ValidateIf } from 'class-validator';
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
