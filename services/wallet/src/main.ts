import { loadConfig, runMain } from '@ccs/shared';
import { WalletConfigSchema } from './config.js';
import { walletService } from './service.js';

await runMain(walletService, () => loadConfig(WalletConfigSchema));
