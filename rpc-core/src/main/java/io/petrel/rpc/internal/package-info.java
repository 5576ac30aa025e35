/**
 * Petrel's machinery. Not API: anything here may change in any release; do not import it.
 */
@NullMarked
package io.petrel.rpc.internal;

import org.jspecify.annotations.NullMarked;
