import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

/** Set one group config (KIP-848 group configs): {@code java GroupConfig BOOTSTRAP GROUP KEY VALUE}. */
public final class GroupConfig {
    public static void main(final String[] args) throws Exception {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            final ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, args[1]);
            admin.incrementalAlterConfigs(Map.of(group, List.of(
                new AlterConfigOp(new ConfigEntry(args[2], args[3]), AlterConfigOp.OpType.SET)))).all().get();
        }
    }
}
