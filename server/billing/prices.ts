// What a request cost, in US dollars, exactly: prices are decimal strings and every sum is made
// in decimal arithmetic (decimal.js), never in binary floats (decision 0027).
import { Decimal } from 'decimal.js';
import type * as C from '../translate/canonical.ts';
import type { MeteredUnit } from '../config/billing-rules.ts';
import { BUCKETS, bucketsOf, webSearchCallsOf, type Bucket, type Buckets } from './buckets.ts';

/** Enough digits for any price times any count: the arithmetic is exact, nothing is rounded. */
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -60, toExpPos: 60 });
export type Money = InstanceType<typeof D>;

/** A model's prices, US dollars as decimal strings (the catalog's `pricing`); null or absent: unknown. */
export type PriceField =
  | 'prompt'
  | 'completion'
  | 'image'
  | 'request'
  | 'input_cache_read'
  | 'input_cache_write'
  | 'input_cache_write_1h'
  | 'internal_reasoning'
  | 'web_search'
  | 'input_audio'
  | 'input_image'
  | 'output_audio'
  | 'output_image'
  | 'video_second'
  | 'character'
  | 'audio_minute';
export type Pricing = Partial<Record<PriceField, string | null>>;

/**
 * Where each bucket's price comes from, first known wins. A cache read without its own price is
 * charged as input (what a provider that lists no cache price charges: never less than the
 * invoice); reasoning without its own price as output (every provider bills thinking as output);
 * image input without its own price as input (chat models bill image tokens as input; GPT image
 * models price them apart: `input_image`).
 * Cache writes, audio and generated images have no stand-in: they cost more than text at every
 * provider that reports them, so without their price the cost is unknown.
 */
export const BUCKET_PRICES: Record<Bucket, readonly PriceField[]> = {
  input: ['prompt'],
  cache_read: ['input_cache_read', 'prompt'],
  cache_write: ['input_cache_write'],
  cache_write_1h: ['input_cache_write_1h'],
  audio_input: ['input_audio'],
  image_input: ['input_image', 'prompt'],
  output: ['completion'],
  reasoning: ['internal_reasoning', 'completion'],
  audio_output: ['output_audio'],
  image_output: ['output_image'],
};

/** The price of one unit of non-token work. */
export const UNIT_PRICES: Record<MeteredUnit, PriceField> = { image: 'image', video_second: 'video_second', character: 'character', audio_minute: 'audio_minute' };

const NANO = new D(1_000_000_000);
export const ZERO: Money = new D(0);

/** Dollars in nano-dollars (what budget counters count), rounded up: a budget is never undercounted. */
export const toNano = (usd: Money) => usd.times(NANO).ceil().toNumber();
/** A budget in dollars (a config value) in nano-dollars. */
export const usdToNano = (usd: string | number) => toNano(new D(usd));
/** Nano-dollars as a dollar decimal string. */
export const nanoToUsd = (nano: bigint | number | string) => new D(String(nano)).div(NANO).toFixed();
/** A decimal string for the API: plain notation, no trailing zeros. */
export const usdText = (v: Money | string) => new D(v).toFixed();
export const money = (v: string | number) => new D(v);

/**
 * The most a request can cost is sized from this: its input's bound and most output, or units of
 * work. `mostInput`: the input is not bounded by `input` alone (it has a part nothing bounds); the
 * most it can be is then `mostInput` (the model's context window; Infinity when unknown), held
 * when it fits and otherwise replaced by a hold of everything that remains (QuotaBilling.reserve).
 */
export type CostEstimate = { input: number; output: number; mostInput?: number } | { unit: MeteredUnit; quantity: number };

/** A model's prices, parsed once: costs and reservations in exact decimal. */
export class PriceList {
  private readonly bucket: Record<Bucket, Money | null>;
  private readonly unit: Record<MeteredUnit, Money | null>;
  private readonly perRequest: Money;
  private readonly perSearch: Money | null;

  constructor(pricing: Pricing | null | undefined) {
    const price = (f: PriceField): Money | null => {
      const v = pricing?.[f];
      return v === null || v === undefined ? null : new D(v);
    };
    const first = (fields: readonly PriceField[]) => fields.map(price).find((p) => p !== null) ?? null;
    this.bucket = Object.fromEntries(BUCKETS.map((b) => [b, first(BUCKET_PRICES[b])])) as Record<Bucket, Money | null>;
    this.unit = Object.fromEntries(Object.entries(UNIT_PRICES).map(([u, f]) => [u, price(f)])) as Record<MeteredUnit, Money | null>;
    // A fixed price per request is extra where set; no price means none.
    this.perRequest = price('request') ?? ZERO;
    this.perSearch = price('web_search');
  }

  /**
   * What a usage (or, without one, `quantity` units of work) cost; null when a bucket it used has
   * no known price. Nothing used costs 0 whatever the prices.
   */
  cost(usage: C.Usage | null, metered?: { unit: MeteredUnit; quantity: number } | null, buckets: Buckets | null = usage ? bucketsOf(usage) : null): Money | null {
    if (usage && buckets) {
      const searches = webSearchCallsOf(usage);
      let sum = ZERO;
      let used = searches > 0;
      for (const b of BUCKETS) {
        const n = buckets[b];
        if (n === 0) continue;
        used = true;
        const p = this.bucket[b];
        if (p === null) return null;
        sum = sum.plus(p.times(n));
      }
      if (!used) return ZERO;
      if (searches > 0) {
        if (this.perSearch === null) return null;
        sum = sum.plus(this.perSearch.times(searches));
      }
      return sum.plus(this.perRequest);
    }
    if (metered && metered.quantity > 0) {
      const p = this.unit[metered.unit];
      return p === null ? null : p.times(metered.quantity).plus(this.perRequest);
    }
    return ZERO;
  }

  /**
   * The most a request sized by `e` can cost: its input at the dearest input price it may be
   * charged (a cache write costs more than a plain read), its output at the dearest output price;
   * null when the plain input/output (or unit) price is unknown.
   */
  maxCost(e: CostEstimate): Money | null {
    if ('unit' in e) {
      const p = this.unit[e.unit];
      return p === null ? null : p.times(e.quantity).plus(this.perRequest);
    }
    const dearest = (buckets: Bucket[], base: Bucket) => {
      const b = this.bucket[base];
      if (b === null) return null;
      return buckets.reduce((m, x) => (this.bucket[x] !== null && this.bucket[x]!.gt(m) ? this.bucket[x]! : m), b);
    };
    const inPrice = e.input > 0 ? dearest(['cache_write', 'cache_write_1h', 'audio_input', 'image_input'], 'input') : ZERO;
    const outPrice = e.output > 0 ? dearest(['reasoning', 'audio_output', 'image_output'], 'output') : ZERO;
    if (inPrice === null || outPrice === null) return null;
    return inPrice.times(e.input).plus(outPrice.times(e.output)).plus(this.perRequest);
  }
}

/** Parsed price lists by pricing object: the catalog makes new objects when prices change. */
export function priceLists(): (pricing: Pricing | null | undefined) => PriceList {
  const cache = new WeakMap<object, PriceList>();
  const unknown = new PriceList(null);
  return (pricing) => {
    if (!pricing) return unknown;
    let list = cache.get(pricing);
    if (!list) cache.set(pricing, (list = new PriceList(pricing)));
    return list;
  };
}
