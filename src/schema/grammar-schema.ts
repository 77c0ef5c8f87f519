/**
 * The JSON Schema keywords a model answer's schema may use: what llama.cpp's
 * json-schema-to-grammar (and the servers built on it) turn into a grammar. No
 * `propertyNames`, `anyOf`, `minimum` or `maximum`: servers reject some and enforce none of
 * the numeric ones, so ranges are checked on the answer instead. The type keeps every
 * schema csv-wave sends to a model within this subset.
 */
export interface GrammarSchema {
  type: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  properties?: Readonly<Record<string, GrammarSchema>>;
  required?: readonly string[];
  enum?: readonly string[];
  /** Anchored (`^…$`), in the regular-expression syntax both JavaScript and llama.cpp read. */
  pattern?: string;
  minLength?: number;
  items?: GrammarSchema;
  /**
   * A boolean only: a nested schema here is beyond what every server takes. Given on every
   * object, as converters differ on what its absence means (`data: {}` only, for some).
   */
  additionalProperties?: boolean;
}
