export * from './errors/hubtel.errors.js';
export * from './store/hubtel-store.interface.js';
export * from './store/memory.store.js';
