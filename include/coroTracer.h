// coroTracer.h - the reference SDK's header name, so `#include "coroTracer.h"` keeps working.
#include "corotracer.hpp"
