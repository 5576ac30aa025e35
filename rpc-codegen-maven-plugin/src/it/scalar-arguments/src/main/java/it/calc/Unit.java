package it.calc;

public enum Unit { METRE, SECOND, KILOGRAM }
