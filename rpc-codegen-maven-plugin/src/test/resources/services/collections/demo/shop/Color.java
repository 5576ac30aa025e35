package demo.shop;

public enum Color { RED, GREEN, BLUE }
