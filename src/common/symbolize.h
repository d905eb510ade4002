/* symbolize.h - forwarding header: the symbolizer lives in src/symbolize/.
 * Only src/analysis/state.h still includes this path (it is being changed on
 * another branch); delete this file once it includes "symbolize/symbolize.h". */
#include "symbolize/symbolize.h"
