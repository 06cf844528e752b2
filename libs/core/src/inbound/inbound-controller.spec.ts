import { Injectable, type CanActivate, type DynamicModule } from '@nestjs/common';
import { accessGuardNeeded, isAccessGuarded, mountController } from './inbound-controller.js';

/** Nest's GUARDS_METADATA key (not exported from the package root, and deep imports break on Nest 12). */
const GUARDS_METADATA = '__guards__';
const TOKEN = Symbol('options');
const forRoot = (options: unknown): DynamicModule => ({
  module: class Host {},
  providers: [
    { provide: 'other', useValue: {} },
    { provide: TOKEN, useValue: options },
  ],
});
const pick = (options: Record<string, unknown>) => options.access;

describe('accessGuardNeeded', () => {
  it('is false only for forRoot options that set no access check', () => {
    expect(accessGuardNeeded(forRoot({}), TOKEN, pick)).toBe(false);
    expect(accessGuardNeeded(forRoot({ access: {} }), TOKEN, pick)).toBe(false);
    expect(accessGuardNeeded(forRoot({ access: { trustedProxies: ['10.0.0.1'] } }), TOKEN, pick)).toBe(false);
  });

  it('is true when a path secret or an allow-list is set, even an empty one', () => {
    expect(accessGuardNeeded(forRoot({ access: { pathSecret: 'a'.repeat(20) } }), TOKEN, pick)).toBe(true);
    expect(accessGuardNeeded(forRoot({ access: { allowedIps: [] } }), TOKEN, pick)).toBe(true);
  });

  it('is true when the options are not known at mount time (forRootAsync) or are malformed', () => {
    const async: DynamicModule = {
      module: class Host {},
      providers: [{ provide: TOKEN, useFactory: () => ({}) }],
    };
    expect(accessGuardNeeded(async, TOKEN, pick)).toBe(true);
    expect(accessGuardNeeded({ module: class Host {} }, TOKEN, pick)).toBe(true);
    expect(accessGuardNeeded(forRoot(null), TOKEN, pick)).toBe(true);
    expect(accessGuardNeeded(forRoot({ access: 'open' }), TOKEN, pick)).toBe(true);
  });
});

describe('mountController with an access guard', () => {
  @Injectable()
  class HostGuard implements CanActivate {
    canActivate() {
      return true;
    }
  }
  @Injectable()
  class SuiteGuard implements CanActivate {
    canActivate() {
      return true;
    }
  }
  class Handlers {}

  it('applies the suite guard after the host guards, and marks the class', () => {
    const mounted = mountController(
      Handlers,
      'p',
      { guards: [HostGuard] },
      { guard: SuiteGuard, needed: true },
    );
    expect(Reflect.getMetadata(GUARDS_METADATA, mounted)).toEqual([HostGuard, SuiteGuard]);
    expect(isAccessGuarded(new mounted())).toBe(true);
  });

  it('applies no suite guard when not needed; the handlers then check access themselves', () => {
    const mounted = mountController(
      Handlers,
      'p',
      { guards: [HostGuard] },
      { guard: SuiteGuard, needed: false },
    );
    expect(Reflect.getMetadata(GUARDS_METADATA, mounted)).toEqual([HostGuard]);
    expect(isAccessGuarded(new mounted())).toBe(false);
  });
});
