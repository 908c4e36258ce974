import { InvalidOptionError } from './errors.js';
import { unknownOption } from './validate.js';

/**
 * Builds an object from a `{ kind, ...options }` spec (a lab config file, the lab page, JSON
 * settings): checks that the spec is an object, that `kind` is one of `fields`' keys and that every
 * other key is an option of that kind, then calls `build(kind, options)`. An option error thrown by
 * the factory is re-issued with the spec's `path`, so it names the field where it stands in the file.
 *
 * @throws InvalidOptionError naming `path`'s field and the value.
 */
export function fromSpec<K extends string, R>(
  owner: string,
  spec: unknown,
  path: string,
  fields: Readonly<Record<K, readonly string[]>>,
  build: (kind: K, options: never) => R,
): R {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InvalidOptionError(owner, path, spec, 'must be an object with a "kind"');
  }
  const { kind, ...options } = spec as Record<string, unknown>;
  const kinds = Object.keys(fields) as K[];
  // includes() matches only one of the (string) kinds, so a kind of any other type fails it too.
  if (!(kinds as unknown[]).includes(kind)) {
    throw new InvalidOptionError(owner, `${path}.kind`, kind, `must be one of ${kinds.map((k) => `"${k}"`).join(', ')}`);
  }
  const known = kind as K;
  const allowed = fields[known];
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new InvalidOptionError(owner, `${path}.${key}`, options[key], unknownOption(`an option of "${known}"`, key, allowed));
    }
  }
  try {
    return build(known, options as never);
  } catch (error) {
    if (error instanceof InvalidOptionError) throw new InvalidOptionError(owner, `${path}.${error.field}`, error.value, error.requirement);
    throw error;
  }
}
