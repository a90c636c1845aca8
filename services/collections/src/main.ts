import { loadConfig, runMain } from '@ccs/shared';
import { CollectionsConfigSchema } from './config.js';
import { collectionsService } from './service.js';

await runMain(collectionsService, () => loadConfig(CollectionsConfigSchema));
