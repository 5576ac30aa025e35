package it.shapes;

public record Point(double x, double y) {}
