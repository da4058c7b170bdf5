package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import java.util.List;

/** mongo-java-server's in-memory backend with its non-unique indexes built ({@link SecondaryIndex}), as on disk. */
final class OrderedMemoryBackend extends MemoryBackend {

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new IndexedDatabase(databaseName, getCursorRegistry());
    }

    private static final class IndexedDatabase extends MemoryDatabase {
        IndexedDatabase(String name, CursorRegistry cursors) {
            super(name, cursors);
        }

        /** The engine builds the index from the collection's documents when it adds it (a new index is empty). */
        @Override
        protected Index<Integer> openOrCreateSecondaryIndex(
                String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            IndexKeyOrder order = SecondaryIndex.orderOf(keys);
            return new SecondaryIndex<>(indexName, keys, sparse, new MemoryIndexEntries(order), order);
        }
    }
}
