-- A fake "Open vSwitch agent" row for the nova-compute host (psql -v host=...), so that
-- ML2/openvswitch binds ports there (vif_type ovs, status DOWN, fixed IPs assigned) although no
-- agent runs: without it every boot fails with PortBindingFailed (vif_plugging_is_fatal =
-- false does not help). The heartbeat is far in the future, so neutron treats the agent as
-- alive for ever; bridge_mappings name the external network's physnet. Idempotent.
INSERT INTO agents (id, agent_type, "binary", topic, host, admin_state_up, created_at, started_at,
                    heartbeat_timestamp, description, configurations, load, availability_zone)
VALUES ('f0000000-0000-4000-8000-000000000001', 'Open vSwitch agent', 'neutron-openvswitch-agent', 'N/A',
        :'host', true, now() at time zone 'utc', now() at time zone 'utc', '2099-12-31 00:00:00',
        'site-agent scripts/openstack: a fake row, nothing runs',
        '{"bridge_mappings": {"extnet": "br-ex"}, "tunnel_types": ["vxlan"], "tunneling_ip": "127.0.0.1", "integration_bridge": "br-int", "ovs_hybrid_plug": false, "datapath_type": "system", "ovs_capabilities": {"datapath_types": ["system"], "iface_types": ["internal", "vxlan", "patch"]}, "l2_population": false, "enable_distributed_routing": false, "arp_responder_enabled": false, "devices": 0, "extensions": []}',
        0, 'nova')
ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, heartbeat_timestamp = EXCLUDED.heartbeat_timestamp,
        configurations = EXCLUDED.configurations, admin_state_up = true;
