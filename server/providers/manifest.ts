// What a vendor folder declares about itself (providers/<vendor>/index.ts): the provider type it
// serves, how it is called, its adapter per capability (with their traits: voices, phoneme support,
// input limits) and what the catalog knows it as. The registry, the clients and the credential
// checks derive from the manifests; nothing outside a vendor's folder names the vendor.
import type { ProviderType } from '../config/schema.ts';
import type { AdapterRow } from './capabilities.ts';
import type { VendorClient } from './vendor-client.ts';

export type VendorManifest = {
  /** The provider `type` of the config file. */
  type: ProviderType;
  client: VendorClient;
  adapters: AdapterRow;
  /** The vendor prefix of its models' ids in OpenRouter's and Poe's catalogs (`google/gemini-2.5-pro`); none: ids are used as they are. */
  catalogVendor?: string;
};
