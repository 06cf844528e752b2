/*
 * DTOs for the validator specs and the micro-benchmark. Together they use every decorator the
 * compiler evaluates inline, plus delegated ones (IsUrl, a @ValidatorConstraint class, a
 * registerDecorator custom), conditions, nesting, inheritance, recursion and class-transformer
 * features that force a class-validator fallback.
 */
import { Expose, Transform, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  buildMessage,
  Equals,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmpty,
  IsEnum,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNotIn,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  NotEquals,
  registerDecorator,
  Validate,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidationOptions,
  type ValidatorConstraintInterface,
} from 'class-validator';

// ---------------------------------------------------------------------------------------------
// The contract's "Checkout web callback body".

export class CheckoutPaymentDetailsDto {
  @IsOptional()
  @IsString()
  @MaxLength(32)
  MobileMoneyNumber?: string;

  @IsString()
  @IsNotEmpty()
  PaymentType: string;

  @IsOptional()
  @IsString()
  Channel?: string;
}

export class CheckoutCallbackDataDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  CheckoutId: string;

  @IsOptional()
  @IsString()
  SalesInvoiceId?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  ClientReference: string;

  @IsString()
  @IsNotEmpty()
  Status: string;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  Amount: number;

  @IsOptional()
  @IsString()
  CustomerPhoneNumber?: string;

  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutPaymentDetailsDto)
  PaymentDetails: CheckoutPaymentDetailsDto;

  @IsOptional()
  @IsString()
  Description?: string;
}

export class CheckoutCallbackDto {
  @IsString()
  @IsNotEmpty()
  ResponseCode: string;

  @IsString()
  Status: string;

  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutCallbackDataDto)
  Data: CheckoutCallbackDataDto;
}

export const validCheckoutCallback = (): Record<string, unknown> => ({
  ResponseCode: '0000',
  Status: 'Success',
  Data: {
    CheckoutId: 'abcd1234efgh5678',
    SalesInvoiceId: 'inv-000123',
    ClientReference: 'order-42',
    Status: 'Success',
    Amount: 12.5,
    CustomerPhoneNumber: '233241234567',
    PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
    Description: 'The MTN Mobile Money payment has been approved and processed successfully.',
  },
});

// ---------------------------------------------------------------------------------------------
// Custom constraints: a @ValidatorConstraint class, a ValidateBy decorator, a registerDecorator one.

@ValidatorConstraint({ name: 'divisibleBy' })
export class DivisibleByConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    return typeof value === 'number' && value % (args.constraints[0] as number) === 0;
  }
  defaultMessage(args: ValidationArguments): string {
    return `$property must be divisible by $constraint1 (${args.targetName})`;
  }
}

export function IsEven(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEven',
      validator: {
        validate: (value: unknown) => typeof value === 'number' && value % 2 === 0,
        defaultMessage: buildMessage((eachPrefix) => `${eachPrefix}$property must be even`, options),
      },
    },
    options,
  );
}

/** Named like a built-in but not one: the compile-time self-check must refuse to inline it. */
export function FakeIsString(options?: ValidationOptions): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isString',
      target: object.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.startsWith('ok'),
        defaultMessage: () => '$property must start with ok',
      },
    });
}

// ---------------------------------------------------------------------------------------------
// Everything else.

export enum Color {
  Red = 'red',
  Green = 'green',
}

export enum Level {
  Low,
  High,
}

export class ItemDto {
  @IsString()
  @Length(2, 10)
  Name: string;

  @IsInt()
  @Min(1)
  @Max(99)
  Qty: number;

  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 2 })
  @IsPositive()
  Price?: number;

  @IsOptional()
  @IsEnum(Level)
  Level?: Level;
}

export class TagDto {
  @IsIn(['a', 'b', 'c'])
  Code: string;

  @IsOptional()
  @Matches(/^[a-z]+$/i)
  Label?: string;
}

export class BaseDto {
  @IsDefined()
  @IsString()
  @MinLength(3)
  @MaxLength(20)
  Id: string;
}

export class EverythingDto extends BaseDto {
  @IsNotEmpty({ message: 'Ref is required, got $value' })
  @Matches('^[A-Z0-9-]+$')
  Ref: string;

  @IsEmpty()
  Nothing?: unknown;

  @IsBoolean()
  Flag: boolean;

  @IsNumber({ allowNaN: true, allowInfinity: true })
  Loose: number;

  @IsNumber(
    {},
    { message: (args: ValidationArguments) => `${args.property} needs a number (${args.targetName})` },
  )
  Strict: number;

  @IsEnum(Color)
  Color: Color;

  @IsOptional()
  @IsUrl()
  Site?: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(3)
  @IsString({ each: true })
  @MaxLength(5, { each: true })
  Tags: string[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(5)
  @ValidateNested({ each: true })
  @Type(() => ItemDto)
  Items?: ItemDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => TagDto)
  Tag?: TagDto;

  @IsOptional()
  @IsObject()
  Meta?: Record<string, unknown>;

  @Allow()
  Free?: unknown;

  @ValidateIf((o: { Flag?: unknown }) => o.Flag === true)
  @IsNotEmpty()
  WhenFlag?: string;

  @IsOptional()
  @Validate(DivisibleByConstraint, [3])
  Triple?: number;

  @IsOptional()
  @IsEven()
  Even?: number;

  @IsOptional()
  @Min(10, { message: 'Low must be at least $constraint1 (got $value)' })
  Low?: number;

  @IsOptional()
  @Length(2, 4)
  Code?: string;

  @IsOptional()
  @IsString()
  @IsString({ message: 'Dup must really be a string' })
  Dup?: string;

  @IsOptional()
  @ValidateNested()
  Untyped?: unknown;

  @IsOptional()
  @IsPositive({ each: true })
  @Max(100, { each: true, message: 'each of $property must be at most $constraint1' })
  @ArrayNotEmpty()
  Nums?: number[];

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  Converted?: number;

  @IsOptional()
  @IsString()
  WithDefault?: string = 'dflt';

  @IsOptional()
  @IsIn([1, 2, NaN])
  @IsNotIn([3])
  @Equals(1, { always: true })
  @NotEquals(2)
  OneOf?: number;

  @IsOptional()
  @FakeIsString()
  Fake?: string;

  @IsOptional()
  @IsString({ validateIf: (o: { Flag?: unknown }) => o.Flag === false })
  OnlyWhenFlagFalse?: unknown;
}

export const validEverything = (): Record<string, unknown> => ({
  Id: 'abc-123',
  Ref: 'REF-1',
  Flag: false,
  Loose: 1.5,
  Strict: 7,
  Color: 'red',
  Site: 'https://example.com/x',
  Tags: ['a', 'bb'],
  Items: [
    { Name: 'Tea', Qty: 2, Price: 3.25, Level: 1 },
    { Name: 'Rice', Qty: 1 },
  ],
  Tag: { Code: 'a', Label: 'Hello' },
  Meta: { any: ['thing', { deep: true }] },
  Free: 'free',
  Triple: 9,
  Even: 4,
  Low: 12,
  Code: 'abc',
  Dup: 'x',
  Untyped: { a: 1 },
  Nums: [1, 2.5],
  Converted: '12',
  OneOf: 1,
  Fake: 'okay',
  OnlyWhenFlagFalse: 'yes',
});

// ---------------------------------------------------------------------------------------------
// Recursion, and classes the compiler must leave to class-validator.

export class TreeNodeDto {
  @IsString()
  Name: string;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => TreeNodeDto)
  Children?: TreeNodeDto[];
}

export class TrimmedDto {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsNotEmpty()
  @IsString()
  Name: string;

  @IsOptional()
  @IsInt()
  Count?: number;
}

export class RenamedDto {
  @Expose({ name: 'full_name' })
  @IsString()
  FullName: string;
}

export class HostDto {
  @IsString()
  Title: string;

  @ValidateNested()
  @Type(() => TrimmedDto)
  Trimmed: TrimmedDto;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => RenamedDto)
  People?: RenamedDto[];
}
