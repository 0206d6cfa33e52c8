// What a vendor folder declares about itself (providers/<vendor>/index.ts): the provider type it
// serves, how it is called, its adapter per capability (with their traits: voices, phoneme support,
// input limits) and what the catalog knows it as. The registry, the clients and the credential
// checks derive from the manifests; nothing outside a vendor's folder names the vendor.
import type { BillingRules } from '../config/billing-rules.ts';
import type { GatewayConfigInput } from '../config/schema.ts';
import type { Dimensions } from '../media/geometry.ts';
import type { AdapterRow } from './capabilities.ts';
import type { VendorClient } from './vendor-client.ts';

/**
 * The most input tokens a vendor's text models bill for one image: by its size when the gateway
 * read it (null: any size) and the detail asked (`low`, or anything else). An upper bound over the
 * vendor's models, never an estimate: holds are sized by it (pipeline/estimate.ts).
 */
export type ImageTokenRule = (size: Dimensions | null, detail: 'low' | 'high') => number;

export type VendorManifest = {
  /** The provider `type` of the config file. */
  type: string;
  client: VendorClient;
  adapters: AdapterRow;
  /** Its `gen_ai.provider.name` in traces: the OpenTelemetry GenAI conventions' well-known value; none: each provider's id. */
  genAiProviderName?: string;
  /** The vendor prefix of its models' ids in OpenRouter's and Poe's catalogs (`google/gemini-2.5-pro`); none: ids are used as they are. */
  catalogVendor?: string;
  /** How its text models bill an image input, at most; none: not known, and a hold takes the largest rule of any vendor. */
  imageTokens?: ImageTokenRule;
  /** Providers of this type the gateway serves with no config file, each when its key is in the environment (boot/environment-config.ts). */
  builtins?: BuiltinProvider[];
};

/** A provider enabled by an environment variable alone, with its current mainstream models. */
export type BuiltinProvider = {
  /** The provider's id, and the one its models name as their upstream. */
  id: string;
  /** It serves other vendors' models (an aggregator): it comes after the direct providers, so a model id one of them also lists is theirs. */
  resells?: true;
  /** The environment variable holding its API key. */
  env: string;
  base_url: string;
  /** `billing`: where a model's work costs other than the default rule (server/config/billing-rules.ts) says, in proportion to list prices. */
  models: { id: string; endpoint: NonNullable<GatewayConfigInput['models']>[number]['endpoint']; upstream?: string; billing?: BillingRules }[];
};
