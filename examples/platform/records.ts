import type { ReceiptOutcome } from './receipt-modes';

/**
 * The platform's data: what it has really done. Every accepted submission gets an acceptance
 * id (R21 evidence) that `GET /submissions/:acceptanceId` answers for. Records are replaced,
 * never mutated, so snapshots handed out stay as they were.
 */
export const submissionKinds = ['asset', 'post', 'review'] as const;
export type SubmissionKind = (typeof submissionKinds)[number];

/** Assets and posts end `published`, reviews `approved`; both can be `rejected`. */
export const submissionStatuses = ['pending', 'published', 'approved', 'rejected'] as const;
export type SubmissionStatus = (typeof submissionStatuses)[number];

export interface AssetRecord {
  readonly id: string;
  readonly acceptanceId: string;
  readonly noteId: string;
  readonly name: string;
  readonly size: number;
  readonly idempotencyKey: string | null;
  readonly uploadedAt: string;
}

export interface PostRecord {
  readonly id: string;
  readonly acceptanceId: string;
  readonly noteId: string;
  readonly version: number;
  readonly title: string;
  readonly html: string;
  readonly status: 'pending' | 'published' | 'rejected';
  readonly receiptId: string | null;
  readonly idempotencyKey: string | null;
  readonly acceptedAt: string;
  readonly publishedAt: string | null;
}

export interface ReviewRecord {
  readonly id: string;
  readonly acceptanceId: string;
  readonly receiptId: string;
  readonly noteId: string;
  readonly version: number | null;
  readonly status: 'pending' | 'approved' | 'rejected';
  readonly idempotencyKey: string | null;
  readonly requestedAt: string;
}

export interface SubmissionRecord {
  readonly acceptanceId: string;
  readonly kind: SubmissionKind;
  /** Id of the asset, post or review. */
  readonly resourceId: string;
  readonly status: SubmissionStatus;
  readonly receiptId: string | null;
  /** Opaque value the client sent (e.g. its task id); echoed in the receipt. */
  readonly reference: string | null;
  readonly category: string | null;
  readonly message: string | null;
}

/** How a pending submission ends. */
export interface Verdict {
  readonly outcome: ReceiptOutcome;
  readonly category?: string;
  readonly message?: string;
}

/** What the platform calls back with once a submission is settled. */
export interface Receipt {
  readonly receiptId: string;
  readonly acceptanceId: string;
  readonly kind: 'post' | 'review';
  readonly resourceId: string;
  readonly reference: string | null;
  readonly outcome: ReceiptOutcome;
  readonly category?: string;
  readonly message?: string;
}

export interface AssetInput {
  readonly noteId: string;
  readonly name: string;
  readonly size: number;
}
export interface PostInput {
  readonly noteId: string;
  readonly version: number;
  readonly title: string;
  readonly html: string;
  readonly reference: string | null;
}
export interface ReviewInput {
  readonly noteId: string;
  readonly version: number | null;
  readonly reference: string | null;
}

export class PlatformRecords {
  readonly #assets = new Map<string, AssetRecord>();
  readonly #posts = new Map<string, PostRecord>();
  readonly #reviews = new Map<string, ReviewRecord>();
  readonly #submissions = new Map<string, SubmissionRecord>();
  /** Never reset, so ids stay unique for the platform's lifetime. */
  readonly #counters: Record<CounterName, number> = {
    acc: 0,
    asset: 0,
    post: 0,
    review: 0,
    rcpt: 0,
  };

  /** Stores an asset at once. */
  uploadAsset(input: AssetInput, idempotencyKey: string | null): AssetRecord {
    const asset: AssetRecord = {
      id: this.#nextId('asset'),
      acceptanceId: this.#nextId('acc'),
      ...input,
      idempotencyKey,
      uploadedAt: now(),
    };
    this.#assets.set(asset.id, asset);
    this.#addSubmission(asset.acceptanceId, 'asset', asset.id, 'published', null, null);
    return asset;
  }

  /** Publishes a post at once, or accepts it as pending when it settles later. */
  acceptPost(input: PostInput, idempotencyKey: string | null, settleLater: boolean): PostRecord {
    const { reference, ...fields } = input;
    const post: PostRecord = {
      id: this.#nextId('post'),
      acceptanceId: this.#nextId('acc'),
      ...fields,
      status: settleLater ? 'pending' : 'published',
      receiptId: settleLater ? this.#nextId('rcpt') : null,
      idempotencyKey,
      acceptedAt: now(),
      publishedAt: settleLater ? null : now(),
    };
    this.#posts.set(post.id, post);
    this.#addSubmission(post.acceptanceId, 'post', post.id, post.status, post.receiptId, reference);
    return post;
  }

  /** Accepts a review request; it is pending until settled. */
  requestReview(input: ReviewInput, idempotencyKey: string | null): ReviewRecord {
    const review: ReviewRecord = {
      id: this.#nextId('review'),
      acceptanceId: this.#nextId('acc'),
      receiptId: this.#nextId('rcpt'),
      noteId: input.noteId,
      version: input.version,
      status: 'pending',
      idempotencyKey,
      requestedAt: now(),
    };
    this.#reviews.set(review.id, review);
    this.#addSubmission(
      review.acceptanceId,
      'review',
      review.id,
      'pending',
      review.receiptId,
      input.reference,
    );
    return review;
  }

  /** Ends a pending post or review; null when it is unknown or no longer pending. */
  settle(acceptanceId: string, verdict: Verdict): Receipt | null {
    const submission = this.#submissions.get(acceptanceId);
    if (submission === undefined || submission.status !== 'pending') return null;
    if (submission.kind === 'asset' || submission.receiptId === null) return null;
    const ok = verdict.outcome === 'ok';
    const category = ok ? null : (verdict.category ?? 'invalid_argument');
    const message = ok ? null : (verdict.message ?? 'rejected by the platform');
    let status: SubmissionStatus;
    if (submission.kind === 'post') {
      const post = this.#posts.get(submission.resourceId);
      if (post === undefined) return null;
      status = ok ? 'published' : 'rejected';
      this.#posts.set(post.id, {
        ...post,
        status: ok ? 'published' : 'rejected',
        publishedAt: ok ? now() : null,
      });
    } else {
      const review = this.#reviews.get(submission.resourceId);
      if (review === undefined) return null;
      status = ok ? 'approved' : 'rejected';
      this.#reviews.set(review.id, { ...review, status: ok ? 'approved' : 'rejected' });
    }
    this.#submissions.set(acceptanceId, { ...submission, status, category, message });
    return {
      receiptId: submission.receiptId,
      acceptanceId,
      kind: submission.kind,
      resourceId: submission.resourceId,
      reference: submission.reference,
      outcome: verdict.outcome,
      ...(category === null ? {} : { category }),
      ...(message === null ? {} : { message }),
    };
  }

  post(id: string): PostRecord | undefined {
    return this.#posts.get(id);
  }

  submission(acceptanceId: string): SubmissionRecord | undefined {
    return this.#submissions.get(acceptanceId);
  }

  assets(): ReadonlyArray<AssetRecord> {
    return [...this.#assets.values()];
  }

  posts(): ReadonlyArray<PostRecord> {
    return [...this.#posts.values()];
  }

  reviews(): ReadonlyArray<ReviewRecord> {
    return [...this.#reviews.values()];
  }

  clear(): void {
    this.#assets.clear();
    this.#posts.clear();
    this.#reviews.clear();
    this.#submissions.clear();
  }

  #addSubmission(
    acceptanceId: string,
    kind: SubmissionKind,
    resourceId: string,
    status: SubmissionStatus,
    receiptId: string | null,
    reference: string | null,
  ): void {
    this.#submissions.set(acceptanceId, {
      acceptanceId,
      kind,
      resourceId,
      status,
      receiptId,
      reference,
      category: null,
      message: null,
    });
  }

  #nextId(prefix: CounterName): string {
    this.#counters[prefix] += 1;
    return `${prefix}_${this.#counters[prefix]}`;
  }
}

type CounterName = 'acc' | 'asset' | 'post' | 'review' | 'rcpt';

function now(): string {
  return new Date().toISOString();
}
