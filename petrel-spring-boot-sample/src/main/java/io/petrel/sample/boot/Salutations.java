package io.petrel.sample.boot;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/** An ordinary Spring bean the service depends on, configured by a property. */
@Component
public class Salutations {
  private final String word;

  public Salutations(@Value("${sample.salutation:Hello}") String word) {
    this.word = word;
  }

  public String salute(String name) {
    return word + " " + name;
  }
}
