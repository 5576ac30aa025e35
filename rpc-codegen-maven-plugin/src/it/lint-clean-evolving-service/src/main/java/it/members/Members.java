package it.members;

import io.petrel.rpc.RpcService;
import java.util.List;

@RpcService("it.Members")
public interface Members {
  Tier tierOf(String member);

  /** The tier's name as the server decoded it, and how many earlier tiers it got. */
  String describe(Tier tier, List<Tier> history);

  void join(String member) throws AlreadyMemberException;

  /** Use {@link #tierOf}. */
  @Deprecated
  int legacyLevel(String member);

  @Deprecated(since = "2", forRemoval = true)
  void oldReset();
}
