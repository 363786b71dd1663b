import type { z } from 'zod';

// The keys the configuration's schema knows at a path: what "did you mean" picks from when a key is unknown.
// Read from the schema itself (zod's definitions), so a new setting is suggested without a list to keep.

/** What zod keeps of a schema's definition, as far as walking the configuration's keys needs it. */
export interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  keyType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: z.ZodType[];
}

export const schemaDef = (s: z.ZodType): SchemaDef => (s as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** Through defaults, nullables, preprocessing and pipes to the object, list, record or value beneath. */
export function unwrapSchema(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = schemaDef(s);
    if (def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in && def.out)
      // z.preprocess(fn, schema) is a pipe from a transform into the schema; other pipes check `in` first.
      s = schemaDef(def.in).type === 'transform' ? def.out : def.in;
    else return s;
  }
}

const unwrap = (schema: z.ZodType): SchemaDef => schemaDef(unwrapSchema(schema));

/** The keys of the mapping at `path` in `schema`, or none when the path leads elsewhere. */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let def = unwrap(schema);
  for (const step of path) {
    const next =
      def.type === 'object'
        ? def.shape?.[String(step)]
        : def.type === 'array'
          ? def.element
          : def.type === 'record'
            ? def.valueType
            : undefined;
    if (!next) return [];
    def = unwrap(next);
  }
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}
