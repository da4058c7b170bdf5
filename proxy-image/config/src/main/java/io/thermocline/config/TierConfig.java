package io.thermocline.config;

/**
 * One replica set: its connection string and the number of backend connections the
 * whole proxy fleet may open to each of its members.
 */
public record TierConfig(String uri, int connectionBudget) {

    public static final int DEFAULT_CONNECTION_BUDGET = 100;
}
