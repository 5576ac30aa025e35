/**
 * An inventory service on Redis through Lettuce (optimistic WATCH/MULTI transactions), with a real redis-server
 * started on a loopback port for the example, its test and the HeTu benchmark workload.
 */
@NullMarked
package io.petrel.examples.inventory;

import org.jspecify.annotations.NullMarked;
