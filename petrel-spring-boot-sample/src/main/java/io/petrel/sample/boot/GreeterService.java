package io.petrel.sample.boot;

import io.petrel.spring.boot.PetrelClient;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Service;

/**
 * Served by the starter because it implements the {@code @RpcService} interface {@link Greeter}: no server code.
 * It calls Frontdesk through a stub the starter injects.
 */
@Service
public class GreeterService implements Greeter {
  private final Salutations salutations;

  @PetrelClient("frontdesk")
  private Frontdesk frontdesk;

  public GreeterService(Salutations salutations) {
    this.salutations = salutations;
  }

  @Override
  public String greet(String name) {
    return salutations.salute(name);
  }

  @Override
  public String greetViaFrontdesk(String name) {
    return frontdesk.welcome(name);
  }

  @Override
  public CompletableFuture<Integer> length(String text) {
    return CompletableFuture.completedFuture(text.length());
  }
}
