/** A health service for probes and load balancers: each service's serving status, following the server's lifecycle. */
@NullMarked
package io.petrel.rpc.health;

import org.jspecify.annotations.NullMarked;
