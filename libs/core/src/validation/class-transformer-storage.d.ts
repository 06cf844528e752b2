/*
 * class-transformer 0.5.1 keeps `@Type()`, `@Transform()`, `@Expose()` and `@Exclude()` metadata in a
 * singleton that its root entry does not export. The package has no `exports` map, so this deep
 * path resolves the same CommonJS file the root entry requires (one instance) under Node ESM, Node
 * CJS and Jest; validation.metadata.ts checks that with a canary before trusting it. Only the
 * members the compiler reads are declared.
 */
declare module 'class-transformer/cjs/storage.js' {
  interface ClassTransformerTypeMetadata {
    target: Function;
    propertyName: string;
    reflectedType: unknown;
    typeFunction?: (options?: unknown) => unknown;
    options?: { discriminator?: unknown; keepDiscriminatorProperty?: boolean };
  }
  export const defaultMetadataStorage: {
    findTypeMetadata(target: Function, propertyName: string): ClassTransformerTypeMetadata | undefined;
    findTransformMetadatas(target: Function, propertyName: string, transformationType: number): unknown[];
    getExposedMetadatas(target: Function): unknown[];
    getExcludedMetadatas(target: Function): unknown[];
    getStrategy(target: Function): 'excludeAll' | 'exposeAll' | 'none';
  };
}
