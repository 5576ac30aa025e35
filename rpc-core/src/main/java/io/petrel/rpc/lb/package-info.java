/** Load-balancing options beyond the built-in policy names: outlier ejection around a policy. */
@NullMarked
package io.petrel.rpc.lb;

import org.jspecify.annotations.NullMarked;
