package it.catalog;

public enum Color { RED, GREEN, BLUE }
