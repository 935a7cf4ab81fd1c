package org.eslm.service;

/**
 * The lock history taken from this node's partitions by one drain (docs/API.md "Lock history"):
 * the body of one {@code _bulk} request of {@code create} actions, written by the core with each
 * document in its final shape, and how many documents it holds.
 *
 * @param bulk      NDJSON: {@code {"create":{}}} and a document per record
 * @param documents the number of documents in {@code bulk}
 */
public record LockHistoryBatch(String bulk, int documents) {}
