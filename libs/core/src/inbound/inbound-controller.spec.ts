import { Injectable, type CanActivate } from '@nestjs/common';
import { mountController } from './inbound-controller.js';

/** Nest's metadata keys (not exported from the package root, and deep imports break on Nest 12). */
const GUARDS_METADATA = '__guards__';
const PATH_METADATA = 'path';

describe('mountController', () => {
  @Injectable()
  class HostGuard implements CanActivate {
    canActivate() {
      return true;
    }
  }
  class Handlers {}

  it("mounts a subclass at the host's path with the host's guards and decorators only", () => {
    const decorated: unknown[] = [];
    const mounted = mountController(Handlers, 'default/path', {
      path: 'shop/hooks',
      guards: [HostGuard],
      decorators: [(target) => void decorated.push(target)],
    });
    expect(mounted).not.toBe(Handlers);
    expect(mounted.name).toBe('Handlers');
    expect(Reflect.getMetadata(PATH_METADATA, mounted)).toBe('shop/hooks');
    expect(Reflect.getMetadata(GUARDS_METADATA, mounted)).toEqual([HostGuard]);
    expect(decorated).toEqual([mounted]);
    expect(Reflect.getMetadata(PATH_METADATA, mountController(Handlers, 'default/path'))).toBe(
      'default/path',
    );
  });
});
