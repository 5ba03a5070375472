// Every CLI command module, imported for its registration side effect.
// Add one line per command.
import './evalFtrl';
import './evalBfcl';
import './tasks';
import './score';
import './generate';
import './bench';
import './train';
import './plot';
import './compare';
import './exportVerl';
import './table';
export {};
