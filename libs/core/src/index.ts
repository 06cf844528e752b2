export const HUBTEL_CORE = 'nestjs-hubtel';
