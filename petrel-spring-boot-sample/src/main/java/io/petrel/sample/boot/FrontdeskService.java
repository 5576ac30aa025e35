package io.petrel.sample.boot;

import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Service;

/** Served with {@code FrontdeskRpc.bindAsync}: it implements the generated asynchronous view. */
@Service
public class FrontdeskService implements FrontdeskAsync {
  @Override
  public CompletableFuture<String> welcome(String guest) {
    return CompletableFuture.completedFuture("Welcome, " + guest);
  }
}
