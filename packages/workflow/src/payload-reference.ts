import { z } from 'zod';

/**
 * A large payload passed by reference (R30): where it is stored and which version, instead of
 * the content itself. Inputs are stored with their workflow and have a size limit
 * (`defaultAdmissionLimits.maxInputBytes`); a note body, an image or a file goes to object
 * storage first, and the input carries this reference. The step reads the content from the
 * storage itself, at exactly this version, so a retry reads the same bytes.
 *
 *   const input = z.object({ noteId: z.string(), body: payloadReference.optional() });
 *   await engine.submit('publish-note', {
 *     noteId: 'n1',
 *     body: payloadRef({ uri: 's3://notes/n1/body.md', version: '3HL4kqtJlcpXroDTDmJ', sizeBytes: 4_812_003 }),
 *   });
 */
export const payloadReference = z
  .object({
    /** Absolute storage URI with a scheme and `//`: `s3://bucket/key`, `gs://…`, `https://…`, `file:///…`. */
    uri: z
      .string()
      .max(2_048)
      .regex(
        /^[a-z][a-z0-9+.-]*:\/\/\S+$/i,
        'must be an absolute storage URI such as s3://bucket/key or https://host/path',
      ),
    /** The stored object's version (S3 version id, GCS generation, ETag…): the exact bytes to read. */
    version: z.union([z.string().min(1).max(256), z.number().int().nonnegative()]),
    /** Size of the content in bytes, if known. */
    sizeBytes: z.number().int().nonnegative().optional(),
    /** SHA-256 of the content, 64 lowercase hex digits, so the step can verify what it read. */
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits')
      .optional(),
  })
  .strict();

/** A large payload by reference: storage URI + version (R30). */
export type PayloadReference = z.output<typeof payloadReference>;

/**
 * Makes a payload reference for a workflow input (see `payloadReference`), checked and frozen;
 * a malformed reference throws a TypeError naming the field, at the call site rather than at
 * admission.
 */
export function payloadRef(reference: PayloadReference): PayloadReference {
  const parsed = payloadReference.safeParse(reference);
  if (!parsed.success) {
    throw new TypeError(
      `payloadRef: ${parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ')}`,
    );
  }
  return Object.freeze(parsed.data);
}
