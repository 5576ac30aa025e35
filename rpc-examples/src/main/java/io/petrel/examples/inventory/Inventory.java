package io.petrel.examples.inventory;

import io.petrel.rpc.RpcService;
import java.util.Map;

/**
 * A game's inventory service kept in Redis: each player's items are one Redis hash, {@code inv:PLAYER}, of item
 * name to count. The updates are optimistic transactions (WATCH, then MULTI/EXEC, again from the start when
 * another client changed a watched key in between) and return how many times they had to start again.
 * The build turns it into {@code InventoryRpc} and {@code InventoryAsync}.
 */
@RpcService("examples.Inventory")
public interface Inventory {
  /** No Redis: answers {@link InventoryService#HELLO_REPLY} (the RPC's own cost). */
  String helloWorld(String name);

  /** The player's items (item to count), read with one HGETALL. */
  Map<String, Integer> get(String player);

  /**
   * Reads the count of {@code item}, then writes it back plus one, in a transaction that starts again when
   * another client changed the player's hash in between; returns how many times it started again.
   */
  int getThenUpdate(String player, String item);

  /**
   * Reads {@code item} of two players, then moves one from the player who has more to the other, in one
   * transaction over both hashes (the total never changes); returns how many times it started again.
   */
  int get2Update2(String player, String otherPlayer, String item);
}
