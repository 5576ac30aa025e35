/**
 * Petrel's machinery. Not API: anything here may change in any release; do not import it.
 */
package io.petrel.rpc.internal;
