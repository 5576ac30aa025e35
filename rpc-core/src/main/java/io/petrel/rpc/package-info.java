/** Petrel's public API: services, calls, clients and servers. Nothing here is null unless marked {@code @Nullable}. */
@NullMarked
package io.petrel.rpc;

import org.jspecify.annotations.NullMarked;
