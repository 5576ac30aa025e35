/** Built-in name resolution (static targets) and load balancing (round robin, least pending). Not API. */
@NullMarked
package io.petrel.rpc.internal.lb;

import org.jspecify.annotations.NullMarked;
