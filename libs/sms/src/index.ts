import { HUBTEL_CORE } from 'nestjs-hubtel';
export const SMS = `${HUBTEL_CORE}/sms`;
